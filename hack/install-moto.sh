#!/usr/bin/env bash
# install-moto.sh installs moto's AWS emulator server (PyPI "moto[server]") into a private virtual environment and
# prints the absolute path of its moto_server program on stdout (logs go to stderr).
#
# The catalog/awsrefresh tests run the real aws-sdk-go-v2 EC2 client against that server on 127.0.0.1; they find it
# through PACKWRIGHT_MOTO_SERVER, which the Makefile sets from this script's output:
#
#   export PACKWRIGHT_MOTO_SERVER="$(hack/install-moto.sh)"
#
# The venv lives in a cache outside the clone, ${XDG_CACHE_HOME:-$HOME/.cache}/packwright/moto-<version>/, so a
# fresh clone (CI) reuses it and `git clean` never removes it. A private venv keeps moto's many dependencies out of
# the system Python and sidesteps PEP 668's "externally managed environment" refusal.
#
# Idempotent: when the venv is complete (marker file .complete) the script only prints the path, which takes a few
# milliseconds. MOTO_VERSION overrides the pinned version (5.2.5, verified with `pip download moto[server]==5.2.5`).
set -euo pipefail

MOTO_VERSION="${MOTO_VERSION:-5.2.5}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/packwright"
prefix="$cache/moto-$MOTO_VERSION"
bin="$prefix/venv/bin/moto_server"

log() { echo "install-moto: $*" >&2; }

if [ -f "$prefix/.complete" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

python=""
for p in python3 python; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys, venv; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
    python="$p"
    break
  fi
done
if [ -z "$python" ]; then
  log "moto $MOTO_VERSION needs Python >= 3.10 with the venv module (Debian: apt-get install python3-venv)"
  exit 1
fi

log "installing moto[server]==$MOTO_VERSION into $prefix/venv (with $($python --version 2>&1))"
rm -rf "$prefix"
mkdir -p "$prefix"
"$python" -m venv "$prefix/venv"
"$prefix/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  "moto[server]==$MOTO_VERSION" >&2
if [ ! -x "$bin" ]; then
  log "pip installed moto but $bin is missing"
  exit 1
fi
# Importing the server module proves the install is usable before it is marked complete.
"$prefix/venv/bin/python" -c 'import moto.server' >&2
touch "$prefix/.complete"
log "installed $("$prefix/venv/bin/python" -c 'import moto; print(moto.__version__)')"
echo "$bin"
