#!/usr/bin/env bash
# Prints a Job of 16 workers of 1 GPU each that runs for RUNTIME.
#   training-job.sh NAME [QUEUE] [RUNTIME]; no QUEUE: not managed by Muster.
set -euo pipefail
name=$1 queue=${2:-} runtime=${3:-15s}
cat <<JOB
apiVersion: batch/v1
kind: Job
metadata:
  name: $name
  namespace: default
$( [[ -n $queue ]] && printf '  labels:\n    muster.dev/queue-name: %s\n' "$queue" )
spec:
  parallelism: 16
  completions: 16
  backoffLimit: 0
  template:
    metadata:
      annotations:
        muster.dev/runtime: $runtime
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: registry.k8s.io/pause:3.10
        resources:
          requests:
            cpu: "1"
            nvidia.com/gpu: "1"
          limits:
            nvidia.com/gpu: "1"
JOB
