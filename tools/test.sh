#!/usr/bin/env bash
# Install pragmeter with its test dependencies on a fresh machine and run the test suite (CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install -q torch==2.13.0
python3 -m pip install -q -e ".[test]"
python3 -m pytest "$@"
