# The README's commands. Each target installs what it needs into .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Exact versions for dev and CI; the local wheel folder (torch's CPU wheel) when present.
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt \
          $(if $(wildcard /opt/wheels),--find-links /opt/wheels)

.PHONY: demo test test-slow test-trainers bench lint clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# One stamp per set of extras, redone when the project or the pins change.
$(VENV)/.installed-%: pyproject.toml constraints.txt | $(PY)
	$(PIP) -e ".[$*]"
	@touch $@

# What each command installs: the demo needs the report extra; tests also run the optional paths.
DEMO_EXTRAS := report,sandbox
TEST_EXTRAS := test,report,torch,trl,ray,fhir,sandbox

demo: $(VENV)/.installed-$(DEMO_EXTRAS)
	$(VENV)/bin/rewardkit demo --out out

# The suite without the tests marked slow (about 8 minutes on 2 cores); CI also runs test-slow.
test: $(VENV)/.installed-$(TEST_EXTRAS)
	$(PY) -m pytest -m "not slow"

# The slow tests alone (about 9 minutes): whole demos, attack classes that hold a worker for their
# full budget, HumanEval, Ray clusters, real TRL runs.
test-slow: $(VENV)/.installed-$(TEST_EXTRAS)
	$(PY) -m pytest -m slow

# The adapters through the real verl and OpenRLHF (their pins conflict with ours: a second venv,
# ci/trainers.sh). An install problem is reported and skipped; a failing test fails.
TRAINERS_VENV ?= .venv-trainers
test-trainers: $(VENV)/.installed-$(TEST_EXTRAS)
	@ci/trainers.sh $(TRAINERS_VENV) $(VENV); rc=$$?; \
	if [ $$rc -eq 10 ]; then \
	    echo "note: verl / OpenRLHF could not be installed here; the trainer-package tests (tests/trainers) did not run"; \
	elif [ $$rc -ne 0 ]; then exit $$rc; \
	else $(TRAINERS_VENV)/bin/python -m pytest tests/trainers -q; fi

bench: $(VENV)/.installed-$(TEST_EXTRAS)
	$(PY) benchmarks/run.py

lint: $(VENV)/.installed-$(TEST_EXTRAS)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) $(TRAINERS_VENV) out .pytest_cache .mypy_cache .ruff_cache
