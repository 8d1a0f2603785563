#!/usr/bin/env bash
# The trainer-package test environment: verl and OpenRLHF beside rewardkit.
#
#   ci/trainers.sh [VENV_DIR] [BASE_VENV]        # default .venv-trainers over .venv
#
# Their pins conflict with ours (verl wants transformers < 5.11, OpenRLHF pins transformers and
# ray), so they are installed with --no-deps into a venv that sees the base venv's packages
# (rewardkit, torch, TRL, ray) through a .pth file, plus only what their reward / agent code
# imports. Exit status 0 when the environment is ready, 10 when a package could not be
# installed (the caller reports it and skips; it is not a test failure).
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${1:-.venv-trainers}
BASE=${2:-.venv}
BASE_SITE=$("$BASE/bin/python" -c 'import site; print(site.getsitepackages()[0])') || exit 10
if [ ! -x "$VENV/bin/python" ]; then
    "$BASE/bin/python" -m venv "$VENV" || exit 10
fi
SITE=$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')
# addsitedir, not a bare path line: the base site's own .pth files (rewardkit's editable
# install among them) must be processed too.
echo "import site; site.addsitedir('$BASE_SITE')" > "$SITE/_rewardkit_base.pth"
STAMP="$VENV/.installed-trainers"
if [ -f "$STAMP" ] && [ "$STAMP" -nt ci/trainers.sh ] && [ "$STAMP" -nt constraints.txt ] &&
    [ "$STAMP" -nt ci/trainers-constraints.txt ]; then
    exit 0
fi
PIP=("$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -c constraints.txt)
[ -d /opt/wheels ] && PIP+=(--find-links /opt/wheels)
# What verl's reward managers / agent loop and OpenRLHF's agent executor import.
"${PIP[@]}" -c ci/trainers-constraints.txt omegaconf hydra-core tensordict codetiming cachetools \
    pylatexenc peft uvicorn fastapi || exit 10
"${PIP[@]}" --no-deps -c ci/trainers-constraints.txt verl openrlhf || exit 10
"$VENV/bin/python" -c 'import verl, openrlhf, torch, trl; assert torch.__version__.startswith("2.13")' \
    || exit 10
touch "$STAMP"
