#!/usr/bin/env bash
# make demo: a local cluster with 3 nodes of 8 GPUs (24 GPUs), Muster on it,
# and two 16-worker training Jobs. kube-scheduler alone would bind some
# workers of each and deadlock; Muster admits each Job whole, one after the
# other. The view refreshes until both Jobs have succeeded. Then a
# PyTorchJob and a RayCluster with their operators, and last a topology
# scene: a Topology of the cluster's racks and hosts, a flavor over rack-0
# (the two a100 nodes) and an 8-pod Job that requires one host, admitted
# whole onto one node (hack/demo/topology.yaml, topology-job.yaml).
#
#   hack/demo.sh         the demo (cluster started if needed; it stays up)
#   hack/demo.sh clean   delete the demo's objects, leaving the cluster up
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${MUSTER_RUN_DIR:-$root/.run/cluster}
kubectl() { "$root/bin/k8s/kubectl" --kubeconfig "$run/kubeconfig" --cache-dir "$run/kube-cache" "$@"; }
# kubectl_muster: `kubectl muster` as a user runs it, the plugin found on
# PATH (kubectl takes no flags before a plugin's name).
kubectl_muster() { KUBECONFIG="$run/kubeconfig" PATH="$root/bin:$PATH" "$root/bin/k8s/kubectl" muster "$@"; }

clean() {
  echo ">> deleting the demo's jobs and queues"
  kubectl delete -n default raycluster ray-demo --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete -n default pytorchjob pt-demo --ignore-not-found --timeout=60s >/dev/null 2>&1 || true
  kubectl delete -n default job train-a train-b train-one-host --ignore-not-found --timeout=60s >/dev/null
  # The ClusterQueue and flavors keep a finalizer until no workload uses them.
  kubectl delete -f "$root/hack/demo/queues.yaml" -f "$root/hack/demo/topology.yaml" --ignore-not-found --timeout=60s >/dev/null
}
if [[ ${1:-} == clean ]]; then clean; exit 0; fi

# admitted_at JOB: when the Workload of a job in default got its quota
# (QuotaReserved True), as RFC 3339 (to the second); empty while it has none.
admitted_at() {
  kubectl get workloads.muster.dev -n default -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}{range .status.conditions[*]}{" "}{.type}={.status}@{.lastTransitionTime}{end}{"\n"}{end}' 2>/dev/null |
    awk -v job="$1" '$1==job { for (i = 2; i <= NF; i++) if ($i ~ /^QuotaReserved=True@/) { sub(/^QuotaReserved=True@/, "", $i); print $i; exit } }'
}

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
  kubectl get workloads.muster.dev -n default 2>/dev/null
  kubectl get workloads.muster.dev -n default -o jsonpath='{range .items[?(@.status.admission)]}{.metadata.name}{"\t"}{.status.admission.podSetAssignments[0].flavors.nvidia\.com/gpu}{"\n"}{end}' 2>/dev/null |
    awk -F'\t' 'NF==2 {printf "  %s holds its GPUs in flavor %s\n", $1, $2}'
  kubectl get workloads.muster.dev -n default -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.conditions[?(@.type=="QuotaReserved")].status}{"\t"}{.status.conditions[?(@.type=="QuotaReserved")].message}{"\n"}{end}' 2>/dev/null |
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

# seeing_the_queue: while train-b waits, what a user asks: its position
# (kubectl muster list), why it waits (kubectl muster why), and the
# visibility API itself. Prints them; fails if they do not say so.
seeing_the_queue() {
  local list why raw
  echo
  echo ">> while train-b waits: kubectl muster list workloads -A"
  list=$(kubectl_muster list workloads -A -o wide)
  echo "$list"
  echo ">> kubectl muster why job/train-b"
  why=$(kubectl_muster why job/train-b -n default)
  echo "$why"
  echo ">> kubectl get --raw /apis/visibility.muster.dev/v1beta1/namespaces/default/localqueues/team/pendingworkloads"
  raw=$(kubectl get --raw /apis/visibility.muster.dev/v1beta1/namespaces/default/localqueues/team/pendingworkloads)
  echo "$raw"
  echo
  if ! awk '$3=="job/train-b" && $7=="0/0" {found=1} END {exit !found}' <<<"$list"; then
    echo ">> kubectl muster list did not show train-b first in its queues (position 0/0); logs are in $run/logs" >&2
    return 1
  fi
  if [[ $why != *"nvidia.com/gpu"* || $why != *"The scheduler's search, run now"* || $why != *"Preemption: "* ]]; then
    echo ">> kubectl muster why did not name the missing GPUs and the scheduler's search; logs are in $run/logs" >&2
    return 1
  fi
  [[ $raw == *'"positionInClusterQueue":0'* ]] || { echo ">> the visibility API did not list train-b; logs are in $run/logs" >&2; return 1; }
}

told_why=""  # the Jobs seen waiting with a reason (QuotaReserved False)
shown=""     # whether seeing_the_queue ran
for (( i = 0; i < 120; i++ )); do
  view
  told_why+=$(kubectl get workloads.muster.dev -n default -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name}{" "}{.status.conditions[?(@.type=="QuotaReserved")].status}{"\n"}{end}' 2>/dev/null |
    awk '$2=="False" {printf " %s", $1}')
  if [[ -z $shown && " $told_why " == *" train-b "* ]]; then
    seeing_the_queue
    shown=1
  fi
  done_jobs=$(kubectl get jobs train-a train-b -n default -o jsonpath='{range .items[*]}{.status.succeeded}{" "}{end}' 2>/dev/null)
  if [[ $done_jobs == "16 16 " ]]; then
    echo
    echo ">> both Jobs succeeded: each ran whole, one after the other, never half-bound."
    break
  fi
  sleep 3
done
[[ $done_jobs == "16 16 " ]] || { echo ">> the Jobs did not finish in time; logs are in $run/logs" >&2; exit 1; }

# First come, first served: train-a was created a second before train-b, so
# it must have been admitted first.
a=$(admitted_at train-a) b=$(admitted_at train-b)
echo ">> train-a got its quota at $a, train-b at $b"
if [[ -z $a || -z $b || ! $a < $b ]]; then
  echo ">> FIFO violated: train-b, created after train-a, was admitted first (or at the same time); logs are in $run/logs" >&2
  exit 1
fi
# ...and train-b, waiting for train-a's GPUs, said why.
if [[ " $told_why " != *" train-b "* || -z $shown ]]; then
  echo ">> train-b waited for ~15s without a pending reason (QuotaReserved False) in any view; logs are in $run/logs" >&2
  exit 1
fi

echo
echo ">> now a PyTorchJob (1 master + 15 workers) and a RayCluster (head + 4 workers x 2 GPUs), with their operators"
"$root/hack/cluster.sh" operators
kubectl delete -f "$root/hack/demo/pytorchjob.yaml" -f "$root/hack/demo/raycluster.yaml" --ignore-not-found >/dev/null
# One after the other: submitted together, whichever Workload reaches the
# scheduler first is admitted alone, and a RayCluster admitted first would
# take 8 of the 16 a100 GPUs the PyTorchJob needs on one flavor.
kubectl apply -f "$root/hack/demo/pytorchjob.yaml" >/dev/null
for (( i = 0; i < 100; i++ )); do [[ -n $(admitted_at pt-demo) ]] && break; sleep 0.3; done
kubectl apply -f "$root/hack/demo/raycluster.yaml" >/dev/null
for (( i = 0; i < 60; i++ )); do
  echo "---- $(date +%T) ----------------------------------------------------------"
  kubectl get workloads.muster.dev -n default 2>/dev/null | grep -v train-
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
    break
  fi
  sleep 3
done
if [[ $state != True || $ray != ready ]]; then
  echo ">> the PyTorchJob or RayCluster did not get there in time; logs are in $run/logs" >&2
  exit 1
fi

echo
echo ">> topology: a Topology of racks and hosts, a flavor over rack-0 (gpu-node-0 and -1), and 8 pods that require one host"
kubectl apply -f "$root/hack/demo/topology.yaml" >/dev/null
kubectl delete -f "$root/hack/demo/topology-job.yaml" --ignore-not-found --timeout=60s >/dev/null
kubectl apply -f "$root/hack/demo/topology-job.yaml" >/dev/null
# one_host: the host of the Job's 8 pods, once all run on one node.
one_host() {
  kubectl get pods -n default -l job-name=train-one-host -o jsonpath='{range .items[*]}{.status.phase} {.spec.nodeName}{"\n"}{end}' 2>/dev/null |
    awk '$1=="Running" || $1=="Succeeded" {n[$2]++; all++} END { for (k in n) if (n[k] == 8 && all == 8) print k }'
}
host=""
for (( i = 0; i < 100; i++ )); do
  host=$(one_host)
  [[ -n $host ]] && break
  sleep 0.3
done
echo "---- $(date +%T) ----------------------------------------------------------"
kubectl get workloads.muster.dev -n default -o wide 2>/dev/null | awk 'NR==1 || /train-one-host/'
placement=$(kubectl get workloads.muster.dev -n default -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name=="train-one-host")]}{.status.admission.podSetAssignments[0].topologyAssignment}{end}' 2>/dev/null)
echo "  topologyAssignment: ${placement:-(none)}"
kubectl get pods -n default -l job-name=train-one-host -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' 2>/dev/null |
  sort | uniq -c | awk '{printf "  %d pods on %s\n", $1, ($2 == "" ? "no node yet" : $2)}'
if [[ -z $host || $placement != *"$host"* ]]; then
  echo ">> train-one-host's 8 pods are not all running on one host: topology-aware admission did not place it; logs are in $run/logs" >&2
  exit 1
fi
echo ">> train-one-host was admitted whole into one host, $host: all 8 pods run there, none on the other a100 node."

down="make cluster-down"; [[ -n ${MUSTER_RUN_DIR:-} ]] && down="MUSTER_RUN_DIR=$run make cluster-down"
echo ">> the cluster is still up: export KUBECONFIG=$run/kubeconfig; stop it with: $down"
