#!/usr/bin/env bash
# make demo: a local cluster with 3 nodes of 8 GPUs (24 GPUs), Muster on it,
# and two 16-worker training Jobs. kube-scheduler alone would bind some
# workers of each and deadlock; Muster admits each Job whole, one after the
# other. The view refreshes until both Jobs have succeeded.
#
#   hack/demo.sh         the demo (cluster started if needed; it stays up)
#   hack/demo.sh clean   delete the demo's objects, leaving the cluster up
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${MUSTER_RUN_DIR:-$root/.run/cluster}
kubectl() { "$root/bin/k8s/kubectl" --kubeconfig "$run/kubeconfig" --cache-dir "$run/kube-cache" "$@"; }

clean() {
  echo ">> deleting the demo's jobs and queues"
  kubectl delete -n default raycluster ray-demo --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete -n default pytorchjob pt-demo --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete -n default job train-a train-b --ignore-not-found --timeout=60s >/dev/null
  # The ClusterQueue and flavors keep a finalizer until no workload uses them.
  kubectl delete -f "$root/hack/demo/queues.yaml" --ignore-not-found --timeout=60s >/dev/null
}
if [[ ${1:-} == clean ]]; then clean; exit 0; fi

"$root/hack/cluster.sh" up
"$root/hack/cluster.sh" muster
echo ">> applying the demo queues (hack/demo/queues.yaml)"
kubectl apply -f "$root/hack/demo/queues.yaml" >/dev/null
# Jobs of an earlier run are gone before the new ones are created.
kubectl delete job train-a train-b --ignore-not-found --timeout=60s >/dev/null
echo ">> submitting two Jobs of 16 workers x 1 GPU on 24 GPUs"
"$root/hack/demo/training-job.sh" train-a team 15s | kubectl apply -f - >/dev/null
sleep 1
"$root/hack/demo/training-job.sh" train-b team 15s | kubectl apply -f - >/dev/null

view() {
  echo "---- $(date +%T) ----------------------------------------------------------"
  kubectl get workloads -n default 2>/dev/null
  kubectl get workloads -n default -o jsonpath='{range .items[?(@.status.admission)]}{.metadata.name}{"\t"}{.status.admission.podSetAssignments[0].flavors.nvidia\.com/gpu}{"\n"}{end}' 2>/dev/null |
    awk -F'\t' 'NF==2 {printf "  %s holds its GPUs in flavor %s\n", $1, $2}'
  kubectl get workloads -n default -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.conditions[?(@.type=="QuotaReserved")].status}{"\t"}{.status.conditions[?(@.type=="QuotaReserved")].message}{"\n"}{end}' 2>/dev/null |
    awk -F'\t' '$2=="False" {printf "  %s waits: %s\n", $1, $3}' | fold -s -w 150 | sed '2,$s/^/      /'
  echo
  printf '%-8s %-8s %-8s %-10s %s\n' JOB RUNNING PENDING SUCCEEDED NODES
  for job in train-a train-b; do
    kubectl get pods -n default -l job-name=$job \
      -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{"\n"}{end}' 2>/dev/null |
      awk -v job=$job '
        $1=="Running" {r++; if ($2!="") n[$2]++}
        $1=="Pending" {p++}
        $1=="Succeeded" {s++}
        END { nodes=""; for (k in n) nodes=nodes k "=" n[k] " "; printf "%-8s %-8d %-8d %-10d %s\n", job, r, p, s, nodes }'
  done
}

for (( i = 0; i < 120; i++ )); do
  view
  done_jobs=$(kubectl get jobs train-a train-b -n default -o jsonpath='{range .items[*]}{.status.succeeded}{" "}{end}' 2>/dev/null)
  if [[ $done_jobs == "16 16 " ]]; then
    echo
    echo ">> both Jobs succeeded: each ran whole, one after the other, never half-bound."
    break
  fi
  sleep 3
done
[[ $done_jobs == "16 16 " ]] || { echo ">> the Jobs did not finish in time; logs are in $run/logs" >&2; exit 1; }

echo
echo ">> now a PyTorchJob (1 master + 15 workers) and a RayCluster (head + 4 workers x 2 GPUs), with their operators"
"$root/hack/cluster.sh" operators
kubectl delete -f "$root/hack/demo/pytorchjob.yaml" -f "$root/hack/demo/raycluster.yaml" --ignore-not-found >/dev/null
kubectl apply -f "$root/hack/demo/pytorchjob.yaml" -f "$root/hack/demo/raycluster.yaml" >/dev/null
for (( i = 0; i < 60; i++ )); do
  echo "---- $(date +%T) ----------------------------------------------------------"
  kubectl get workloads -n default 2>/dev/null | grep -v train-
  kubectl get pytorchjob,raycluster -n default 2>/dev/null
  for sel in training.kubeflow.org/job-name=pt-demo ray.io/cluster=ray-demo; do
    kubectl get pods -n default -l "$sel" -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{"\n"}{end}' 2>/dev/null |
      awk -v sel="$sel" '$1=="Running" {r++; n[$2]++} $1=="Succeeded" {s++}
        END { nodes=""; for (k in n) nodes=nodes k "=" n[k] " "; printf "  %-38s running %-3d succeeded %-3d %s\n", sel, r, s, nodes }'
  done
  state=$(kubectl get pytorchjob pt-demo -n default -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}' 2>/dev/null)
  ray=$(kubectl get raycluster ray-demo -n default -o jsonpath='{.status.state}' 2>/dev/null)
  if [[ $state == True && $ray == ready ]]; then
    echo
    echo ">> the PyTorchJob ran whole and succeeded; the RayCluster is ready (on the h100 flavor while the PyTorchJob held a100)."
    down="make cluster-down"; [[ -n ${MUSTER_RUN_DIR:-} ]] && down="MUSTER_RUN_DIR=$run make cluster-down"
    echo ">> the cluster is still up: export KUBECONFIG=$run/kubeconfig; stop it with: $down"
    exit 0
  fi
  sleep 3
done
echo ">> the PyTorchJob or RayCluster did not get there in time; logs are in $run/logs" >&2
exit 1
