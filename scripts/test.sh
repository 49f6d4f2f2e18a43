#!/usr/bin/env bash
# The suite's one entry point (README.md's test command, and so .ci/run's): install what the
# tests need beyond pip, then run pytest with any arguments given.
#
# Beyond pip the suite needs two of Debian's programs, installed here on a fresh machine instead
# of failing tests: chromium (tests/test_report_html.py and tests/test_serve.py open pages in it)
# and PostgreSQL's server (tests/pg_server.py starts a throwaway one; every store test runs on
# it too; the cluster Debian's package may make and start is never used).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v chromium >/dev/null || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql-15)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    echo "The tests need Debian's ${missing[*]} and this user cannot install them; run" \
         "'apt-get install ${missing[*]}' as root, then this script again." >&2
    exit 2
  fi
  echo "Installing Debian's ${missing[*]} (the tests' browser and database server)..." >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Bytecode goes to a cache of its own, outside the checkout (the suite writes nothing in it).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/cp-annotator-pycache}"
exec .venv/bin/python -m pytest "$@"
