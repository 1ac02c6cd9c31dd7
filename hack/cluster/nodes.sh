#!/usr/bin/env bash
# Prints the fake GPU nodes of the local cluster as YAML.
#   NODES (default 3) nodes of GPUS (default 8) nvidia.com/gpu each, plus
#   cpu and memory. The first two thirds are a100 nodes, the rest h100
#   (rounded so there is at least one of each when NODES >= 2); each node
#   has a rack label, two nodes per rack.
#
#   TOPOLOGY=BxRxN (e.g. 2x2x4) adds a topology pool beside them: B blocks
#   of R racks of N nodes of GPUS GPUs each, named topo-b<i>-r<j>-n<k> and
#   labelled
#     muster.dev/block: b<i>
#     topology.kubernetes.io/rack: b<i>-r<j>     (unique cluster-wide)
#     kubernetes.io/hostname: <node name>
#     muster.dev/gpu: $TOPOLOGY_GPU              (default a100)
#     muster.dev/pool: topology
#   and tainted muster.dev/pool=topology:NoSchedule, so only pods of a flavor
#   that tolerates it land there: pods of no queue, and of the demo's
#   flavors, keep to the NODES nodes above as if the pool were not there.
set -euo pipefail
nodes=${NODES:-3}
gpus=${GPUS:-8}
topology=${TOPOLOGY:-}
topology_gpu=${TOPOLOGY_GPU:-a100}

# node NAME GPU_KIND RACK [LABELS [SPEC]]: one node. LABELS are more label
# lines (indented by 4, each ending in a newline); SPEC is its spec (lines
# ending in a newline).
node() {
  local name=$1 kind=$2 rack=$3 labels=${4:-} spec=${5:-}
  cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: $name
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: $name
    kubernetes.io/os: linux
    type: kwok
    muster.dev/gpu: $kind
    topology.kubernetes.io/rack: $rack
${labels}${spec}status:
  allocatable:
    cpu: "32"
    memory: 256Gi
    pods: "110"
    nvidia.com/gpu: "$gpus"
  capacity:
    cpu: "32"
    memory: 256Gi
    pods: "110"
    nvidia.com/gpu: "$gpus"
NODE
}

a100=$(( nodes * 2 / 3 )); (( a100 < 1 )) && a100=1
for (( i = 0; i < nodes; i++ )); do
  kind=a100; (( i >= a100 )) && kind=h100
  node "gpu-node-$i" "$kind" "rack-$(( i / 2 ))"
done

[[ -z $topology ]] && exit 0
if [[ ! $topology =~ ^([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)$ ]]; then
  echo "TOPOLOGY must be BLOCKSxRACKSxNODES (e.g. 2x2x4), not '$topology'" >&2
  exit 2
fi
blocks=${BASH_REMATCH[1]} racks=${BASH_REMATCH[2]} per_rack=${BASH_REMATCH[3]}
spec=$'spec:\n  taints:\n  - key: muster.dev/pool\n    value: topology\n    effect: NoSchedule\n'
for (( b = 0; b < blocks; b++ )); do
  for (( r = 0; r < racks; r++ )); do
    for (( n = 0; n < per_rack; n++ )); do
      node "topo-b$b-r$r-n$n" "$topology_gpu" "b$b-r$r" \
        "    muster.dev/block: b$b"$'\n'"    muster.dev/pool: topology"$'\n' "$spec"
    done
  done
done
