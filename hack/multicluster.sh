#!/usr/bin/env bash
# Two worker clusters beside the local cluster of hack/cluster.sh, which
# is their manager: what the multi-cluster end-to-end suite runs on, and
# what docs/multi-cluster.md's walk-through tries by hand. Each worker is a
# whole hack/cluster.sh cluster (etcd, kube-apiserver, the Job controller,
# kube-scheduler, NODES kwok nodes of GPUS GPUs, Muster) in its own run
# directory and ports, with the worker ClusterRole of
# config/multicluster/worker_role.yaml bound to a ServiceAccount whose token
# is in manager.kubeconfig there: the kubeconfig the manager's MultiCluster
# Secret holds.
#
#   hack/multicluster.sh up       start (or complete) worker1 and worker2
#   hack/multicluster.sh down     stop them
#   hack/multicluster.sh stop-apiserver N   stop worker N's API server (a lost worker)
#   hack/multicluster.sh start-apiserver N  start it again (and its Muster)
#
# Worker N lives in ${MUSTER_RUN_DIR:-.run/cluster}-worker<N>, its ports are
# hack/cluster.sh's defaults plus N*100 (API server 26443+N*100).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
base=${MUSTER_RUN_DIR:-$root/.run/cluster}
workers=(1 2)

# in_worker N CMD...: runs CMD with worker N's run directory and ports.
in_worker() {
  local n=$1; shift
  local o=$((n * 100))
  MUSTER_RUN_DIR=$base-worker$n ETCD_PORT=$((23790 + o)) API_PORT=$((26443 + o)) WEBHOOK_PORT=$((29443 + o)) \
    MUSTER_PROBE_PORT=$((28081 + o)) MUSTER_METRICS_PORT=$((28080 + o)) MUSTER_VISIBILITY_PORT=$((28082 + o)) \
    NODES=${NODES:-2} GPUS=${GPUS:-8} TOPOLOGY='' WORKLOAD_API=0 COSCHEDULING='' "$@"
}

kubectl_worker() {
  local run=$base-worker$1; shift
  "$root/bin/k8s/kubectl" --kubeconfig "$run/kubeconfig" --cache-dir "$run/kube-cache" "$@"
}

# manager_identity N: the ServiceAccount the manager acts as in worker N,
# bound to the worker ClusterRole, and a kubeconfig with its token and the
# API server's CA embedded (a MultiCluster refuses files and insecure TLS).
manager_identity() {
  local n=$1 run=$base-worker$1 token
  kubectl_worker "$n" apply -f "$root/config/multicluster/worker_role.yaml" >/dev/null
  token=$(kubectl_worker "$n" -n muster-system create token muster-multicluster --duration 24h)
  # A credential: readable by its owner only.
  (umask 077; : >"$run/manager.kubeconfig")
  cat >"$run/manager.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: worker$n
  cluster:
    server: https://127.0.0.1:$((26443 + n * 100))
    certificate-authority-data: $(base64 -w0 "$run/pki/apiserver/apiserver.crt")
users:
- name: muster-multicluster
  user:
    token: $token
contexts:
- name: worker$n
  context: {cluster: worker$n, user: muster-multicluster}
current-context: worker$n
KUBECONFIG
}

up() {
  local n
  for n in "${workers[@]}"; do
    printf '>> worker%s\n' "$n" >&2
    in_worker "$n" "$root/hack/cluster.sh" up
    in_worker "$n" "$root/hack/cluster.sh" muster
    manager_identity "$n"
  done
}

down() {
  local n
  for n in "${workers[@]}"; do in_worker "$n" "$root/hack/cluster.sh" down; done
}

stop_apiserver() {
  local pidfile=$base-worker$1/pids/kube-apiserver.pid
  [[ -f $pidfile ]] || return 0
  kill -TERM -- "-$(cat "$pidfile")" 2>/dev/null || kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
  for (( i = 0; i < 50; i++ )); do kill -0 "$(cat "$pidfile")" 2>/dev/null || break; sleep 0.2; done
  rm -f "$pidfile"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  stop-apiserver) stop_apiserver "${2:?worker number}" ;;
  # Its Muster lost its leader lease with the API server and exited: it is
  # started again too.
  start-apiserver) in_worker "${2:?worker number}" "$root/hack/cluster.sh" up
    in_worker "$2" "$root/hack/cluster.sh" muster ;;
  *) echo "usage: $0 up|down|stop-apiserver N|start-apiserver N" >&2; exit 2 ;;
esac
