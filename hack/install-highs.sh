#!/usr/bin/env bash
# install-highs.sh makes HiGHS available to cgo and prints the PKG_CONFIG_PATH entry to use (empty when the
# system's HiGHS is used).
#
# Order of preference:
#   1. a system HiGHS that `pkg-config highs` finds (Debian 13 libhighs-dev, Homebrew, conda);
#   2. PyPI's HiGHS binary distribution `highsbox` (a manylinux2014 wheel holding libhighs.so, the headers and the
#      highs CLI). The wheel is fetched with `pip download` (no install into any Python environment, so PEP 668's
#      "externally managed" refusal does not apply and no root is needed) and unpacked into a cache outside the
#      clone, ${XDG_CACHE_HOME:-$HOME/.cache}/packwright/highs-<version>, with a highs.pc written for that folder.
#      A project-local .cache/highs symlink points at it.
#
# Idempotent: a second run only checks that the install is complete. Set PACKWRIGHT_HIGHS=bundled to skip the
# system library, or PACKWRIGHT_HIGHS=system to require it; PACKWRIGHT_HIGHS_PREFIX installs elsewhere (the
# Dockerfile uses /opt/highs, so the binary's rpath is the same in the build and runtime images).
set -euo pipefail

HIGHS_VERSION="${HIGHS_VERSION:-1.15.1}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/packwright"
prefix="${PACKWRIGHT_HIGHS_PREFIX:-$cache/highs-$HIGHS_VERSION}"
mode="${PACKWRIGHT_HIGHS:-auto}"

log() { echo "install-highs: $*" >&2; }

if [ "$mode" != bundled ] && command -v pkg-config >/dev/null 2>&1 &&
  PKG_CONFIG_PATH= pkg-config --exists highs 2>/dev/null; then
  log "using the system HiGHS $(PKG_CONFIG_PATH= pkg-config --modversion highs)"
  echo ""
  exit 0
fi
if [ "$mode" = system ]; then
  log "PACKWRIGHT_HIGHS=system but pkg-config finds no 'highs' (install libhighs-dev on Debian 13+, or 'brew install highs')"
  exit 1
fi
if ! command -v pkg-config >/dev/null 2>&1; then
  log "pkg-config is missing: cgo needs it to find HiGHS (Debian/Ubuntu: apt-get install pkg-config)"
  exit 1
fi

link_local() {
  mkdir -p "$root/.cache"
  ln -sfn "$prefix" "$root/.cache/highs"
}

if [ -f "$prefix/.complete" ]; then
  link_local
  echo "$prefix/lib/pkgconfig"
  exit 0
fi

python=""
for p in python3 python; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -m pip --version >/dev/null 2>&1; then python="$p"; break; fi
done
if [ -z "$python" ]; then
  log "neither a system HiGHS (pkg-config highs) nor Python 3 with pip is available."
  log "Install one of them: Debian 13+/Ubuntu 25.04+: apt-get install libhighs-dev pkg-config;"
  log "Homebrew: brew install highs; or Python 3 with pip (Debian: apt-get install python3-pip)."
  exit 1
fi

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) ;;
*)
  log "no highsbox wheel is used for $(uname -s)/$(uname -m); install a system HiGHS (brew install highs, conda install highs)"
  exit 1
  ;;
esac

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
log "downloading highsbox==$HIGHS_VERSION from PyPI"
if ! "$python" -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --python-version 3.11 -d "$tmp" "highsbox==$HIGHS_VERSION" >&2; then
  log "pip could not download highsbox==$HIGHS_VERSION (is PyPI reachable?)"
  exit 1
fi
wheel="$(ls "$tmp"/highsbox-*.whl)"
"$python" -m zipfile -e "$wheel" "$tmp/x"
dist="$(ls -d "$tmp"/x/highsbox-*.data/purelib/highsbox/highs_dist)"

rm -rf "$prefix.partial"
mkdir -p "$prefix.partial/lib/pkgconfig"
cp -a "$dist/include" "$prefix.partial/include"
cp -a "$dist/bin" "$prefix.partial/bin"
cp -a "$dist"/lib/*.so* "$prefix.partial/lib/"
chmod +x "$prefix.partial/bin/"* || true

# The wheel's own highs.pc names its build prefix; write one for where it now lives. The rpath in Libs makes
# every cgo binary and test find libhighs.so without LD_LIBRARY_PATH.
write_pc() {
  cat >"$1/lib/pkgconfig/highs.pc" <<PC
prefix=$2
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: HiGHS
Description: HiGHS linear and mixed-integer optimisation (from PyPI highsbox $HIGHS_VERSION)
Version: $HIGHS_VERSION
Libs: -L\${libdir} -lhighs -Wl,-rpath,\${libdir}
Cflags: -I\${includedir}/highs -I\${includedir}
PC
}
write_pc "$prefix.partial" "$prefix"
rm -rf "$prefix"
mv "$prefix.partial" "$prefix"
touch "$prefix/.complete"
link_local
log "installed HiGHS $HIGHS_VERSION into $prefix"
echo "$prefix/lib/pkgconfig"
