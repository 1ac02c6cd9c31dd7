#!/usr/bin/env bash
# Prints the fake GPU nodes of the local cluster as YAML.
#   NODES (default 3) nodes of GPUS (default 8) nvidia.com/gpu each, plus
#   cpu and memory. The first two thirds are a100 nodes, the rest h100
#   (rounded so there is at least one of each when NODES >= 2); each node
#   has a rack label, two nodes per rack.
set -euo pipefail
nodes=${NODES:-3}
gpus=${GPUS:-8}
a100=$(( nodes * 2 / 3 )); (( a100 < 1 )) && a100=1
for (( i = 0; i < nodes; i++ )); do
  kind=a100; (( i >= a100 )) && kind=h100
  cat <<NODE
---
apiVersion: v1
kind: Node
metadata:
  name: gpu-node-$i
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    kubernetes.io/hostname: gpu-node-$i
    kubernetes.io/os: linux
    type: kwok
    muster.dev/gpu: $kind
    topology.kubernetes.io/rack: rack-$(( i / 2 ))
status:
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
done
