#!/usr/bin/env bash
# Builds Kubernetes control-plane binaries from Go modules into a bin directory.
#
#   hack/build-tools.sh OUTDIR NAME...
#
# NAME is one of: etcd kube-apiserver kube-controller-manager kube-scheduler
# kubectl kwok training-operator kuberay-operator jobset-operator mpi-operator lws-operator trainer-operator appwrapper-operator helm scheduler-plugins
# cluster-autoscaler.
# scheduler-plugins is the kubernetes-sigs scheduler-plugins kube-scheduler
# (Coscheduling and the rest), on Kubernetes v1.31 (hack/tools/scheduler-plugins),
# stamped with that version rather than hack/tools/k8s's.
# cluster-autoscaler is the Kubernetes cluster-autoscaler with only its kwok
# cloud provider (build tag kwok, hack/tools/cluster-autoscaler). Its
# builder_all.go (all providers) does not exclude the kwok tag, so with it
# the builder's functions are declared twice; go build -overlay may not
# replace a file of the module cache, so the module is built from a copy of
# its zip (the module proxy serves the zip, though it refuses the go.mod)
# with that file replaced by hack/tools/cluster-autoscaler/builder_all.go.txt.
# Each binary is rebuilt only when the pinned module files (go.mod/go.sum of its
# tools module) change: OUTDIR/.NAME.pin records the hash it was built from.
# Nothing is downloaded except modules from the Go module proxy.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$1; shift
mkdir -p "$out"
out=$(cd "$out" && pwd)

# ldflags_for VERSION: the link flags stamping Kubernetes VERSION (e.g. v1.37.2).
ldflags_for() {
  local version=$1 major minor flags="-s -w" pkg
  major=$(echo "${version#v}" | cut -d. -f1)
  minor=$(echo "${version#v}" | cut -d. -f2)
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=${major} -X ${pkg}.gitMinor=${minor}"
    flags+=" -X ${pkg}.gitTreeState=clean -X ${pkg}.buildDate=1970-01-01T00:00:00Z"
  done
  echo "$flags"
}
k8s_version=$(cd "$here/tools/k8s" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
ldflags=$(ldflags_for "$k8s_version")

# A binary's pin covers its module files and the flags it is linked with.
pin_of() { { cat "$here/tools/$1/go.mod" "$here/tools/$1/go.sum"; echo "$2"; } | sha256sum | cut -d' ' -f1; }

# autoscaler_module: the cluster-autoscaler module to build (see above):
# its zip, from the module cache or the module proxy, unpacked under
# OUTDIR/.src with builder_all.go replaced, and a copy of
# hack/tools/cluster-autoscaler's go.mod replacing the module by it. Prints
# the directory of that copy.
autoscaler_module() {
  local mod=k8s.io/autoscaler/cluster-autoscaler tools=$here/tools/cluster-autoscaler version zip src work
  version=$(sed -n "s|^\t$mod \(v[^ ]*\).*|\1|p" "$tools/go.mod")
  src=$out/.src/cluster-autoscaler@$version work=$out/.src/cluster-autoscaler-build
  if [[ ! -f $src/go.mod ]]; then
    mkdir -p "$out/.src"
    zip=$(go env GOMODCACHE)/cache/download/$mod/@v/$version.zip
    if [[ ! -s $zip ]]; then
      zip=$out/.src/cluster-autoscaler.zip
      curl -sSfL -o "$zip" "$(go env GOPROXY | cut -d, -f1 | sed 's|/*$||')/$mod/@v/$version.zip"
    fi
    rm -rf "$src.tmp" && mkdir -p "$src.tmp"
    unzip -q "$zip" -d "$src.tmp"
    chmod -R u+w "$src.tmp"
    mv "$src.tmp/$mod@$version" "$src" && rm -rf "$src.tmp"
  fi
  cp "$tools/builder_all.go.txt" "$src/cloudprovider/builder/builder_all.go"
  mkdir -p "$work"
  { cat "$tools/go.mod"; echo "replace $mod => $src"; } >"$work/go.mod"
  cp "$tools/go.sum" "$work/go.sum"
  echo "$work"
}

build() {
  local name=$1 module pkg pin flags=$ldflags tags= dir
  case "$name" in
    etcd) module=etcd; pkg=. ;;
    kube-apiserver|kube-controller-manager|kube-scheduler|kubectl) module=k8s; pkg=k8s.io/kubernetes/cmd/$name ;;
    kwok) module=kwok; pkg=sigs.k8s.io/kwok/cmd/kwok ;;
    training-operator) module=training-operator; pkg=github.com/kubeflow/training-operator/cmd/training-operator.v1 ;;
    kuberay-operator) module=kuberay; pkg=github.com/ray-project/kuberay/ray-operator ;;
    jobset-operator) module=jobset; pkg=sigs.k8s.io/jobset ;;
    mpi-operator) module=mpi-operator; pkg=github.com/kubeflow/mpi-operator/cmd/mpi-operator ;;
    lws-operator) module=lws; pkg=sigs.k8s.io/lws/cmd ;;
    trainer-operator) module=trainer; pkg=github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager ;;
    appwrapper-operator) module=appwrapper; pkg=github.com/project-codeflare/appwrapper/cmd ;;
    helm) module=helm; pkg=helm.sh/helm/v3/cmd/helm ;;
    scheduler-plugins)
      module=scheduler-plugins; pkg=sigs.k8s.io/scheduler-plugins/cmd/scheduler
      flags=$(ldflags_for "$(cd "$here/tools/$module" && go list -m -f '{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}' k8s.io/kubernetes)") ;;
    cluster-autoscaler)
      module=cluster-autoscaler; pkg=k8s.io/autoscaler/cluster-autoscaler; tags=kwok ;;
    *) echo "unknown binary: $name" >&2; exit 2 ;;
  esac
  pin=$(pin_of "$module" "$flags${tags:+ -tags $tags $(cat "$here/tools/$module/builder_all.go.txt")}")
  if [[ -x "$out/$name" && "$(cat "$out/.$name.pin" 2>/dev/null)" == "$pin" ]]; then
    return 0
  fi
  echo ">> building $name from Go modules (cached; a cold build of kube-apiserver takes 5-20 min on 2 cores)" >&2
  local start=$SECONDS
  dir=$here/tools/$module
  if [[ $name == cluster-autoscaler ]]; then dir=$(autoscaler_module); fi
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -tags "$tags" -ldflags "$flags" -o "$out/$name" "$pkg")
  echo "$pin" > "$out/.$name.pin"
  echo ">> built $name in $((SECONDS - start))s" >&2
}

for name in "$@"; do build "$name"; done
