#!/usr/bin/env bash
# Prints a file:// module proxy holding k8s.io/autoscaler/cluster-autoscaler
# at the version hack/tools/cluster-autoscaler pins: the module proxy serves
# that pseudo-version's .info and .zip but refuses its .mod (403), which
# `go mod tidy` needs. The .mod is the go.mod inside the zip, the file the
# checksum database hashed, so go.sum still checks it.
# Usage: GOPROXY=$(hack/autoscaler-modproxy.sh DIR),$(go env GOPROXY) go mod tidy
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: $0 DIR}
mod=k8s.io/autoscaler/cluster-autoscaler
version=$(sed -n "s|^\t$mod \(v[^ ]*\).*|\1|p" "$here/tools/cluster-autoscaler/go.mod")
dir=$out/$mod/@v
if [[ ! -s $dir/$version.mod ]]; then
  mkdir -p "$dir"
  zip=$(go env GOMODCACHE)/cache/download/$mod/@v/$version.zip
  if [[ ! -s $zip ]]; then
    zip=$dir/$version.zip.tmp
    curl -sSfL -o "$zip" "$(go env GOPROXY | cut -d, -f1 | sed 's|/*$||')/$mod/@v/$version.zip"
  fi
  cp "$zip" "$dir/$version.zip.part" && mv "$dir/$version.zip.part" "$dir/$version.zip"
  rm -f "$dir/$version.zip.tmp"
  unzip -p "$dir/$version.zip" "$mod@$version/go.mod" >"$dir/$version.mod"
  printf '{"Version":"%s"}\n' "$version" >"$dir/$version.info"
fi
echo "file://$(cd "$out" && pwd)"
