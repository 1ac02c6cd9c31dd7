#!/usr/bin/env bash
# Builds Kubernetes control-plane binaries from Go modules into a bin directory.
#
#   hack/build-tools.sh OUTDIR NAME...
#
# NAME is one of: etcd kube-apiserver kube-controller-manager kube-scheduler
# kubectl kwok training-operator kuberay-operator helm.
# Each binary is rebuilt only when the pinned module files (go.mod/go.sum of its
# tools module) change: OUTDIR/.NAME.pin records the hash it was built from.
# Nothing is downloaded except modules from the Go module proxy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$1; shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

k8s_version=$(cd "$here/tools/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
major=$(echo "${k8s_version#v}" | cut -d. -f1)
minor=$(echo "${k8s_version#v}" | cut -d. -f2)
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X ${pkg}.gitVersion=${k8s_version} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
  ldflags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
done

# A binary's pin covers its module files and the flags it is linked with.
pin_of() { { cat "$here/tools/$1/go.mod" "$here/tools/$1/go.sum"; echo "$ldflags"; } | sha256sum | cut -d' ' -f1; }

build() {
  local name=$1 module pkg pin
  case "$name" in
    etcd) module=etcd; pkg=. ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl) module=k8s; pkg=k8s.io/kubernetes/cmd/$name ;;
    kwok) module=kwok; pkg=sigs.k8s.io/kwok/cmd/kwok ;;
    training-operator) module=training-operator; pkg=github.com/kubeflow/training-operator/cmd/training-operator.v1 ;;
    kuberay-operator) module=kuberay; pkg=github.com/ray-project/kuberay/ray-operator ;;
    helm) module=helm; pkg=helm.sh/helm/v3/cmd/helm ;;
    *) echo "unknown binary: $name" >&2; exit 2 ;;
  esac
  pin=$(pin_of "$module")
  if [[ -x "$out/$name" && "$(cat "$out/.$name.pin" 2>/dev/null)" == "$pin" ]]; then
    return 0
  fi
  echo ">> building $name from Go modules (cached; a cold build of kube-apiserver takes 5-20 min on 2 cores)" >&2
  local start=$SECONDS
  (cd "$here/tools/$module" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$name" "$pkg")
  echo "$pin" > "$out/.$name.pin"
  echo ">> built $name in $((SECONDS - start))s" >&2
}

for name in "$@"; do build "$name"; done
