# The README's commands. Each target installs what it needs into .venv first.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# Exact versions for dev and CI; the local wheel folder (torch's CPU wheel) when present.
PIP    := $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt \
          $(if $(wildcard /opt/wheels),--find-links /opt/wheels)

.PHONY: demo test bench lint clean

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

test: $(VENV)/.installed-$(TEST_EXTRAS)
	$(PY) -m pytest

bench: $(VENV)/.installed-$(TEST_EXTRAS)
	$(PY) benchmarks/run.py

lint: $(VENV)/.installed-$(TEST_EXTRAS)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) out .pytest_cache .mypy_cache .ruff_cache
