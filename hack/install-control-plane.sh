#!/usr/bin/env bash
# install-control-plane.sh builds the Kubernetes control plane that the end-to-end tests run (kube-apiserver,
# kube-scheduler and etcd) from their Go modules, pinned in hack/controlplane (Kubernetes) and
# hack/controlplane/etcd (etcd, whose dependencies are older than Kubernetes' own), and prints the folder holding
# them: what envtest's BinaryAssetsDirectory and the e2e tests' PACKWRIGHT_CONTROL_PLANE want. Logs go to stderr.
#
# No binary is downloaded: everything builds from the Go module proxy. A cold build takes about 20 minutes on two
# cores, so the binaries live in a cache outside the clone, ${XDG_CACHE_HOME:-$HOME/.cache}/packwright/
# control-plane-<version>/, which a fresh clone (CI) reuses; a complete folder (marker .complete) makes a second
# run print the path in milliseconds. Concurrent runs wait for each other; an interrupted build resumes from the
# binaries it finished (and the Go build cache).
set -euo pipefail

K8S_VERSION="v1.37.2"
ETCD_VERSION="v3.6.16"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/packwright"
dest="$cache/control-plane-$K8S_VERSION"

log() { echo "install-control-plane: $*" >&2; }
die() { log "error: $*"; exit 1; }
complete() { [ -f "$dest/.complete" ] && [ -x "$dest/kube-apiserver" ] && [ -x "$dest/kube-scheduler" ] && [ -x "$dest/etcd" ]; }

if complete; then
  echo "$dest"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "go is not on PATH: the control plane builds from Go modules (Go 1.26)"
mkdir -p "$cache" || die "cannot create the cache folder $cache"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.control-plane-$K8S_VERSION.lock"
  if ! flock -n 9; then
    log "another run is building $dest; waiting for it"
    flock 9
  fi
  if complete; then
    echo "$dest"
    exit 0
  fi
fi
trap 'log "error: failed (exit $?) at line $LINENO: $BASH_COMMAND; rerun to resume, the finished binaries are kept in $dest.partial"' ERR

# The tools modules must build as pinned: no workspace, no go.mod rewrites.
export GOWORK=off GOFLAGS="-mod=readonly -trimpath -buildvcs=false" CGO_ENABLED=0

# Without these, the servers report v0.0.0-master+$Format:%H$, which kubectl refuses to parse.
minor="${K8S_VERSION#v1.}"
minor="${minor%%.*}"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done

mkdir -p "$dest.partial"
began=$(date +%s)
for bin in kube-apiserver kube-scheduler; do
  if [ ! -x "$dest.partial/$bin" ]; then
    log "building $bin $K8S_VERSION (cold: about 20 minutes for kube-apiserver on two cores, 2 more for kube-scheduler)"
    t0=$(date +%s)
    (cd "$root/hack/controlplane" && go build -ldflags "$ldflags" -o "$dest.partial/$bin.tmp" "k8s.io/kubernetes/cmd/$bin")
    mv "$dest.partial/$bin.tmp" "$dest.partial/$bin"
    log "built $bin in $(($(date +%s) - t0)) s"
  fi
done
if [ ! -x "$dest.partial/etcd" ]; then
  log "building etcd $ETCD_VERSION (about 1-2 minutes)"
  t0=$(date +%s)
  (cd "$root/hack/controlplane/etcd" && go build -o "$dest.partial/etcd.tmp" go.etcd.io/etcd/server/v3)
  mv "$dest.partial/etcd.tmp" "$dest.partial/etcd"
  log "built etcd in $(($(date +%s) - t0)) s"
fi

# Check what was built reports the pinned versions.
apiserver_version="$("$dest.partial/kube-apiserver" --version)"
scheduler_version="$("$dest.partial/kube-scheduler" --version)"
etcd_version="$("$dest.partial/etcd" --version)"
[ "$apiserver_version" = "Kubernetes $K8S_VERSION" ] || die "kube-apiserver reports '$apiserver_version', want 'Kubernetes $K8S_VERSION'"
[ "$scheduler_version" = "Kubernetes $K8S_VERSION" ] || die "kube-scheduler reports '$scheduler_version', want 'Kubernetes $K8S_VERSION'"
case "$etcd_version" in
  *"etcd Version: ${ETCD_VERSION#v}"*) ;;
  *) die "etcd reports '$etcd_version', want 'etcd Version: ${ETCD_VERSION#v}'" ;;
esac

rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "kube-apiserver/kube-scheduler $K8S_VERSION, etcd $ETCD_VERSION; built $(date -u +%FT%TZ) in $(($(date +%s) - began)) s" >"$dest/.complete"
log "built in $(($(date +%s) - began)) s into $dest"
echo "$dest"
