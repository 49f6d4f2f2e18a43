#!/usr/bin/env bash
# The suite's one entry point (README.md's test command, and so .ci/run's): install what the
# tests need beyond pip, then run pytest with any arguments given.
#
# Beyond pip the suite needs Debian's chromium (tests/test_report_html.py opens the HTML report
# in it), so a fresh machine gets it here instead of two failing tests.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "The tests need Debian's chromium and this user cannot install it; run" \
         "'apt-get install chromium' as root, then this script again." >&2
    exit 2
  fi
  echo "Installing Debian's chromium (the HTML report's tests open it)..." >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# Bytecode goes to a cache of its own, outside the checkout (the suite writes nothing in it).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/cp-annotator-pycache}"
exec .venv/bin/python -m pytest "$@"
