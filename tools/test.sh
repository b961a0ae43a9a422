#!/usr/bin/env bash
# Install pragmeter with its test dependencies on a fresh machine and run the test suite (CI runs exactly this).
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's Chromium for the browser tests (web page, report screenshot); skipped where apt is unavailable.
if command -v apt-get >/dev/null && [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
python3 -m pip install -q torch==2.13.0
python3 -m pip install -q -e ".[test]"
python3 -m pytest "$@"
