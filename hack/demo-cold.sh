#!/usr/bin/env bash
# make demo-cold: `make demo` as a new user's first run gets it, on a cluster
# created from nothing: a fresh run directory, so a new etcd (no CRD of
# Muster or of the operators was ever applied), new certificates and an
# empty kubectl discovery cache. Binaries are reused (bin/k8s; see
# hack/build-tools.sh). Then the demo's objects are deleted and the cluster
# is left up, empty, for `make test-e2e` (CI runs both on one cluster).
#
# The run directory is $MUSTER_RUN_DIR, default .run/cold (not the
# .run/cluster of `make demo`): whatever runs there is stopped and its state
# removed first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export MUSTER_RUN_DIR=${MUSTER_RUN_DIR:-$root/.run/cold}
run=$MUSTER_RUN_DIR

start=$(date +%s)
"$root/hack/cluster.sh" down
# Only what hack/cluster.sh creates there, whatever the directory is.
rm -rf "$run/etcd" "$run/pki" "$run/logs" "$run/pids" "$run/kube-cache" "$run/kubeconfig" "$run/muster-config.yaml"
echo ">> cold start in $run"
"$root/hack/demo.sh"
demo_done=$(date +%s)
"$root/hack/demo.sh" clean
echo ">> cold demo passed: $((demo_done - start))s from nothing to the demo's end ($(( $(date +%s) - start ))s with the clean-up);" \
  "the cluster is still up (MUSTER_RUN_DIR=$run), stop it with: MUSTER_RUN_DIR=$run make cluster-down"
