#!/usr/bin/env bash
# Create .venv (Python 3.11) and install the project with its dev tools. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3.11}"
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# torch is pinned to the CPU wheel that lies on these machines (a bare `torch` pulls CUDA).
.venv/bin/python -m pip install --quiet -c constraints.txt "torch==2.13.0"
# constraints.txt pins every dependency to the versions the figures in docs/ were measured with.
.venv/bin/python -m pip install --quiet -c constraints.txt -e ".[dev]"
# The browser test drives Debian's chromium through Playwright (Playwright's own browser download
# is not used): install it when it is missing and apt can be used.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
  elif command -v sudo >/dev/null 2>&1; then
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null \
      || { sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
  fi
fi
