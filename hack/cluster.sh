#!/usr/bin/env bash
# A whole Kubernetes cluster on loopback, built from Go modules, no Docker:
# etcd, kube-apiserver, kube-controller-manager (Job controller),
# kube-scheduler, kwok playing the kubelets of fake GPU nodes, and
# optionally Muster and the job operators (Kubeflow training, KubeRay, JobSet,
# MPI, LeaderWorkerSet, Kubeflow Trainer v2, AppWrapper).
# kwok sends no kubelet heartbeats, so the node lifecycle controller is off
# and nodes are not tainted not-ready on creation.
#
#   hack/cluster.sh up        cluster + nodes (builds what is missing)
#   hack/cluster.sh muster    (re)start Muster on it: CRDs, webhooks, manager
#   hack/cluster.sh operators start the job operators (OPERATORS=training,kuberay,jobset,mpi,lws,trainer,appwrapper:
#                             default all; each built from Go modules when missing)
#                             OPERATORS=autoscaler (never by default) starts the cluster
#                             autoscaler: ProvisioningRequests served by kwok nodes
#   hack/cluster.sh down      stop exactly the processes started here
#   hack/cluster.sh status    what runs
#
# Everything lives under $MUSTER_RUN_DIR (default .run/cluster): pki/,
# logs/, pids/, kubeconfig and kubectl's discovery cache. Ports are on
# 127.0.0.1 and overridable: ETCD_PORT (and ETCD_PORT+10 for peers), API_PORT,
# WEBHOOK_PORT (and WEBHOOK_PORT+1, +2, +3, +4 for the training, JobSet,
# LeaderWorkerSet and Trainer v2 operators),
# MUSTER_PROBE_PORT, MUSTER_METRICS_PORT; the other processes listen on none
# or on ephemeral ports. MUSTER_LOG_LEVEL (default info; 2 for debug) sets
# Muster's verbosity, MUSTER_WORKER_LOST_TIMEOUT (default 15m) its
# multiCluster.workerLostTimeout. hack/multicluster.sh runs two more
# clusters as this one's workers.
#
# Nodes (hack/cluster/nodes.sh): NODES (default 3) nodes of GPUS (default 8)
# GPUs labelled muster.dev/gpu a100 or h100, the demo's 24 GPUs. With
# TOPOLOGY=BxRxN, `up` adds a topology pool of B blocks x R racks x N nodes
# of GPUS GPUs (TOPOLOGY=2x2x4: 16 nodes, 128 GPUs) named topo-b<i>-r<j>-n<k>
# and labelled muster.dev/block=b<i>, topology.kubernetes.io/rack=b<i>-r<j>
# (unique cluster-wide), kubernetes.io/hostname=<node name>,
# muster.dev/gpu=$TOPOLOGY_GPU (default a100) and muster.dev/pool=topology.
# The pool is tainted muster.dev/pool=topology:NoSchedule: only pods of a
# flavor that tolerates the taint land there, so the 3-node demo, and pods
# of no queue, behave as without it. `up` on a running cluster adds the
# pool; without TOPOLOGY it leaves a pool that is there (`down` removes
# every node with etcd). make test-e2e runs `up` with TOPOLOGY=2x2x4.
#
# WORKLOAD_API (default 1; 0 turns it off) makes `up` serve the upstream
# Workload API and gang-schedule with the default scheduler, so that the
# demo's cluster and the e2e suite's are the same one: the feature gates GenericWorkload and
# TopologyAwareWorkloadScheduling on the API server, controller-manager and
# scheduler (the scheduler then enables its GangScheduling,
# TopologyPlacementGenerator and PodGroupPodsCount plugins), and
# scheduling.k8s.io/v1beta1 (Workload, PodGroup: what the scheduler and the
# controller-manager watch) and v1alpha3 (the same kinds plus
# CompositePodGroup) served. Pods join a PodGroup through
# spec.schedulingGroup.podGroupName. Set it on the `up` that starts the
# control plane: a running API server keeps its flags.
#
# COSCHEDULING=1 makes `up` also run the kubernetes-sigs scheduler-plugins
# scheduler (v0.31, built on Kubernetes v1.31 from hack/tools/scheduler-plugins)
# as a second scheduler, schedulerName scheduler-plugins-scheduler, with the
# Coscheduling plugin (permitWaitingTimeSeconds: 10), and installs its PodGroup
# CRD (scheduling.x-k8s.io/v1alpha1, `make gang-crds`). A pod joins a group
# with schedulerName: scheduler-plugins-scheduler and the label
# scheduling.x-k8s.io/pod-group: <PodGroup name>.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
run=${MUSTER_RUN_DIR:-$root/.run/cluster}
bin=$root/bin/k8s
etcd_port=${ETCD_PORT:-23790}
api_port=${API_PORT:-26443}
webhook_port=${WEBHOOK_PORT:-29443}
probe_port=${MUSTER_PROBE_PORT:-28081}
metrics_port=${MUSTER_METRICS_PORT:-28080}
visibility_port=${MUSTER_VISIBILITY_PORT:-28082}
token=muster-local-admin-token
# WORKLOAD_API: the flags of the upstream Workload API (see above).
workload_gates=GenericWorkload=true,TopologyAwareWorkloadScheduling=true
apiserver_flags=() controller_flags=() scheduler_flags=()
if [[ ${WORKLOAD_API:-1} == 1 ]]; then
  apiserver_flags=(--feature-gates "$workload_gates"
    --runtime-config scheduling.k8s.io/v1beta1=true,scheduling.k8s.io/v1alpha3=true)
  controller_flags=(--feature-gates "$workload_gates")
  scheduler_flags=(--feature-gates "$workload_gates")
fi
kubeconfig=$run/kubeconfig
# kubectl's discovery cache is per run directory: a cluster created again on
# the same port never sees the API groups of an earlier one.
kubectl() { "$bin/kubectl" --kubeconfig "$kubeconfig" --cache-dir "$run/kube-cache" "$@"; }
say() { printf '>> %s\n' "$*" >&2; }

# start NAME CMD...: runs CMD in the background, logging to logs/NAME.log.
# CMD gets no open file of the caller but stdin, stdout and stderr: a
# process that outlives this script must not hold, say, the lock of a
# `flock LOCK make demo` for as long as it runs.
start() {
  local name=$1; shift
  if is_running "$name"; then return 0; fi
  # Each process's log starts empty (muster_leads reads it); the previous
  # one's is kept beside it, so a failure before a restart can be read.
  if [[ -s $run/logs/$name.log ]]; then mv -f "$run/logs/$name.log" "$run/logs/$name.log.$(date +%s%N)"; fi
  (
    for fd in /proc/$BASHPID/fd/*; do
      fd=${fd##*/}
      if (( fd > 2 )); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec setsid "$@"
  ) >"$run/logs/$name.log" 2>&1 < /dev/null &
  echo $! >"$run/pids/$name.pid"
}

is_running() { [[ -f $run/pids/$1.pid ]] && kill -0 "$(cat "$run/pids/$1.pid")" 2>/dev/null; }

# wait_for WHAT SECONDS CMD...: retries CMD until it succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  for (( i = 0; i < secs * 5; i++ )); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  say "timed out waiting for $what; logs are in $run/logs"
  return 1
}

# established CRD...: whether every named CRD (customresourcedefinition.../x)
# has its Established condition True. A CRD applied a moment ago has no
# status yet, so `kubectl wait --for condition=established` can fail on it
# outright (".status.conditions accessor error: <nil>"); this is retried.
established() {
  local crd
  for crd in "$@"; do
    [[ $(kubectl get "$crd" -o 'jsonpath={.status.conditions[?(@.type=="Established")].status}') == True ]] || return 1
  done
}

# apply_crds FILE|DIR...: applies CRDs server-side and waits until the API
# server serves every one of them.
apply_crds() {
  local args=() names f
  for f in "$@"; do args+=(-f "$f"); done
  names=$(kubectl apply --server-side --force-conflicts -o name "${args[@]}")
  # shellcheck disable=SC2086 # one name per word
  wait_for "the CRDs in $* to be established" 60 established $names
}

# nodes_ready: whether every node's Ready condition is True (one call:
# `kubectl wait --timeout` bounds all the nodes together, too short for the
# topology pool's).
nodes_ready() {
  local ready
  ready=$(kubectl get nodes -o 'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}') || return 1
  [[ -n $ready ]] && ! grep -qvx True <<<"$ready"
}

stop() {
  local name=$1 pid
  [[ -f $run/pids/$name.pid ]] || return 0
  pid=$(cat "$run/pids/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for (( i = 0; i < 50; i++ )); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$run/pids/$name.pid"
}

pki() {
  local p=$run/pki
  mkdir -p "$p"
  if [[ ! -f $p/sa.key ]]; then
    openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
    openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
    # The webhook server's CA.
    openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=muster-local-ca" \
      -keyout "$p/ca.key" -out "$p/ca.crt" 2>/dev/null
    printf '%s,admin,admin,system:masters\n' "$token" >"$p/tokens.csv"
  fi
  serving_cert
  front_proxy_pki
}

# visibility_host: the name kube-apiserver checks the visibility API's
# certificate against (<service>.<namespace>.svc of its APIService).
visibility_host=muster-webhook-service.muster-system.svc

# serving_cert: the certificate of the webhook server, and of the
# visibility API, for 127.0.0.1 and the visibility Service's name (made
# again if an older run directory's lacks that name).
serving_cert() {
  local p=$run/pki
  if [[ -f $p/webhook/tls.crt ]] && openssl x509 -in "$p/webhook/tls.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "$visibility_host"; then
    return 0
  fi
  mkdir -p "$p/webhook"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$p/webhook/tls.key" -out "$p/webhook.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:%s\n' "$visibility_host" >"$p/webhook.ext"
  openssl x509 -req -in "$p/webhook.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 365 \
    -extfile "$p/webhook.ext" -out "$p/webhook/tls.crt" 2>/dev/null
}

# front_proxy_pki: the front proxy's CA and client certificate.
# kube-apiserver presents the certificate when it proxies a request to an
# aggregated API (Muster's visibility API), which then trusts the user and
# groups it names in X-Remote-User and X-Remote-Group.
front_proxy_pki() {
  local p=$run/pki
  [[ -f $p/front-proxy-client.crt ]] && return 0
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj "/CN=front-proxy-ca" \
    -keyout "$p/front-proxy-ca.key" -out "$p/front-proxy-ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=front-proxy-client" \
    -keyout "$p/front-proxy-client.key" -out "$p/front-proxy-client.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$p/front-proxy-client.ext"
  openssl x509 -req -in "$p/front-proxy-client.csr" -CA "$p/front-proxy-ca.crt" -CAkey "$p/front-proxy-ca.key" \
    -CAcreateserial -days 365 -extfile "$p/front-proxy-client.ext" -out "$p/front-proxy-client.crt" 2>/dev/null
}

write_kubeconfig() {
  cat >"$kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: muster-local
  cluster:
    server: https://127.0.0.1:$api_port
    certificate-authority: $run/pki/apiserver/apiserver.crt
users:
- name: admin
  user:
    token: $token
contexts:
- name: muster-local
  context: {cluster: muster-local, user: admin}
current-context: muster-local
KUBECONFIG
}

up() {
  mkdir -p "$run/logs" "$run/pids"
  say "building the control plane from Go modules (first time: several minutes; then cached)"
  "$root/hack/build-tools.sh" "$bin" etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kwok
  if [[ ${COSCHEDULING:-} == 1 ]]; then "$root/hack/build-tools.sh" "$bin" scheduler-plugins; fi
  pki
  say "starting etcd on 127.0.0.1:$etcd_port"
  start etcd "$bin/etcd" --data-dir "$run/etcd" --listen-client-urls "http://127.0.0.1:$etcd_port" \
    --advertise-client-urls "http://127.0.0.1:$etcd_port" --listen-peer-urls "http://127.0.0.1:$((etcd_port + 10))" \
    --initial-advertise-peer-urls "http://127.0.0.1:$((etcd_port + 10))" --initial-cluster "default=http://127.0.0.1:$((etcd_port + 10))" \
    --unsafe-no-fsync
  wait_for etcd 30 curl -sf "http://127.0.0.1:$etcd_port/health"
  say "starting kube-apiserver on https://127.0.0.1:$api_port"
  start kube-apiserver "$bin/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --cert-dir "$run/pki/apiserver" --token-auth-file "$run/pki/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$run/pki/sa.pub" \
    --service-account-signing-key-file "$run/pki/sa.key" --service-cluster-ip-range 10.96.0.0/16 \
    --endpoint-reconciler-type none --allow-privileged \
    --disable-admission-plugins TaintNodesByCondition --max-requests-inflight 1000 --max-mutating-requests-inflight 500 \
    --requestheader-client-ca-file "$run/pki/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$run/pki/front-proxy-client.crt" --proxy-client-key-file "$run/pki/front-proxy-client.key" \
    ${apiserver_flags[@]+"${apiserver_flags[@]}"}
  wait_for kube-apiserver 60 curl -skf -H "Authorization: Bearer $token" "https://127.0.0.1:$api_port/readyz"
  write_kubeconfig
  say "starting kube-controller-manager, kube-scheduler and kwok"
  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig "$kubeconfig" --leader-elect=false \
    --secure-port 0 --service-account-private-key-file "$run/pki/sa.key" --use-service-account-credentials=false \
    --root-ca-file "$run/pki/apiserver/apiserver.crt" --controllers '*,-nodelifecycle,-nodeipam' ${controller_flags[@]+"${controller_flags[@]}"}
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig "$kubeconfig" --leader-elect=false --secure-port 0 \
    ${scheduler_flags[@]+"${scheduler_flags[@]}"}
  if [[ ${COSCHEDULING:-} == 1 ]]; then coscheduling; fi
  start kwok "$bin/kwok" --kubeconfig "$kubeconfig" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake --node-lease-duration-seconds 0 \
    --config "$root/hack/cluster/kwok-stages.yaml"
  "$root/hack/cluster/nodes.sh" | kubectl apply -f - >/dev/null
  # Retried: nodes just created have no conditions until kwok sets them.
  wait_for "nodes Ready" 60 nodes_ready
  say "cluster up: export KUBECONFIG=$kubeconfig"
}

# coscheduling: the scheduler-plugins scheduler beside the default one
# (COSCHEDULING=1, see above). Its Coscheduling plugin watches PodGroups
# from the start, so their CRD goes first.
coscheduling() {
  local crd=$root/bin/crds/coscheduling/scheduling.x-k8s.io_podgroups.yaml
  make -s -C "$root" "$crd"
  apply_crds "$crd"
  cat >"$run/scheduler-plugins.yaml" <<CONFIG
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
clientConnection:
  kubeconfig: $kubeconfig
profiles:
- schedulerName: scheduler-plugins-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
  pluginConfig:
  - name: Coscheduling
    args:
      permitWaitingTimeSeconds: 10
CONFIG
  start scheduler-plugins "$bin/scheduler-plugins" --config "$run/scheduler-plugins.yaml" --secure-port 0
}

muster() {
  mkdir -p "$run/logs" "$run/pids"
  say "building Muster"
  (cd "$root" && go build -o "$root/bin/muster" ./cmd/muster && go build -o "$root/bin/kubectl-muster" ./cmd/kubectl-muster)
  make -s -C "$root" job-crds
  say "installing Muster's CRDs and webhooks"
  apply_crds "$root/config/crd/bases"
  kubectl create namespace muster-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl kustomize "$root/config/webhook" | (cd "$root" && go run ./hack/localwebhooks -url "https://127.0.0.1:$webhook_port" -ca "$run/pki/ca.crt") \
    | kubectl apply -f - >/dev/null
  cat >"$run/muster-config.yaml" <<CONFIG
apiVersion: config.muster.dev/v1beta1
kind: Configuration
namespace: muster-system
health:
  healthProbeBindAddress: 127.0.0.1:$probe_port
metrics:
  # HTTPS with a self-signed certificate, to bearer tokens authorized for
  # GET /metrics: curl -k with the admin token (docs/local-cluster.md).
  bindAddress: 127.0.0.1:$metrics_port
  secureServing: true
visibility:
  # Reached by kube-apiserver through the APIService below.
  bindAddress: 127.0.0.1:$visibility_port
webhook:
  host: 127.0.0.1
  port: $webhook_port
  certDir: $run/pki/webhook
leaderElection:
  leaderElect: true
internalCertManagement:
  enable: false
# The kinds on by default, and the opt-in kinds whose operators
# hack/cluster.sh operators runs here (RayJob, JobSet, MPIJob,
# LeaderWorkerSet, TrainJob, AppWrapper), and plain Pods (no operator; only
# those that name a queue are gated).
integrations:
  frameworks: [batch/job, kubeflow.org/pytorchjob, ray.io/raycluster, ray.io/rayjob, jobset.x-k8s.io/jobset, kubeflow.org/mpijob, pod, leaderworkerset.x-k8s.io/leaderworkerset, trainer.kubeflow.org/trainjob, workload.codeflare.dev/appwrapper]
  acceptKueueQueueLabel: true
# As a manager of worker clusters (hack/multicluster.sh): how long a lost
# worker's jobs wait before they are dispatched elsewhere.
multiCluster:
  workerLostTimeout: ${MUSTER_WORKER_LOST_TIMEOUT:-15m}
CONFIG
  stop muster
  say "starting Muster (logs: $run/logs/muster.log)"
  start muster "$root/bin/muster" --config "$run/muster-config.yaml" --kubeconfig "$kubeconfig" \
    --zap-time-encoding=rfc3339nano --zap-log-level="${MUSTER_LOG_LEVEL:-info}"
  wait_for "Muster ready" 60 curl -sf "http://127.0.0.1:$probe_port/readyz"
  # Ready means serving webhooks; the controllers and the scheduler run only
  # once Muster leads (at once on a new cluster, after the lease expires if
  # an earlier Muster died holding it). Jobs created before then all get
  # their Workloads at the same moment, in no particular order.
  wait_for "Muster to lead and start its controllers" 60 muster_leads
  register_visibility
}

# register_visibility: the APIService of visibility.muster.dev. No
# kube-proxy runs here, so its Service is an ExternalName for localhost:
# kube-apiserver dials localhost at the APIService's port, where Muster
# serves with the webhook certificate (signed by the local CA, named for
# $visibility_host).
register_visibility() {
  kubectl apply -f - >/dev/null <<MANIFESTS
apiVersion: v1
kind: Service
metadata:
  name: muster-webhook-service
  namespace: muster-system
spec:
  type: ExternalName
  externalName: localhost
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.visibility.muster.dev
spec:
  group: visibility.muster.dev
  version: v1beta1
  groupPriorityMinimum: 100
  versionPriority: 100
  caBundle: $(base64 -w0 "$run/pki/ca.crt")
  service:
    name: muster-webhook-service
    namespace: muster-system
    port: $visibility_port
MANIFESTS
  wait_for "the visibility API to be available" 60 visibility_available || {
    say "kubectl get apiservice v1beta1.visibility.muster.dev says: $(kubectl get apiservice v1beta1.visibility.muster.dev \
      -o 'jsonpath={.status.conditions[?(@.type=="Available")].message}' 2>&1)"
    say "(an API server started by an older hack/cluster.sh lacks the front proxy flags: hack/cluster.sh down, then up)"
    return 1
  }
}

visibility_available() {
  [[ $(kubectl get apiservice v1beta1.visibility.muster.dev -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}') == True ]]
}

# muster_leads: whether Muster holds the leader lease (its metrics), has
# rebuilt its scheduler and runs the workers of its Job and Workload
# controllers, their caches synced (its log, which starts empty with each
# process).
muster_leads() {
  local metrics log=$run/logs/muster.log c
  metrics=$(curl -skf -H "Authorization: Bearer $token" "https://127.0.0.1:$metrics_port/metrics") || return 1
  grep -q '^leader_election_master_status{name="muster.dev"} 1' <<<"$metrics" || return 1
  grep -q '"msg":"Started scheduler"' "$log" || return 1
  for c in batch-job workload; do
    grep -Eq "\"msg\":\"Starting workers\".*\"controller\":\"$c\"" "$log" || return 1
  done
}

operator_cert_generated() {
  [[ -n $(kubectl -n kubeflow get secret training-operator-webhook-cert -o 'jsonpath={.data.tls\.crt}') ]]
}

# The operators `operators` starts: OPERATORS, a comma-separated list of
# these names, default all of them; `autoscaler` (the cluster autoscaler)
# is accepted too but started only when named.
all_operators=training,kuberay,jobset,mpi,lws,trainer,appwrapper

operators() {
  mkdir -p "$run/logs" "$run/pids"
  local list=${OPERATORS:-$all_operators} name
  make -s -C "$root" job-crds
  for name in ${list//,/ }; do
    case "$name" in
      training|kuberay|jobset|mpi|lws|trainer|appwrapper|autoscaler) "operator_$name" ;;
      *) say "unknown operator $name (known: $all_operators,autoscaler)"; return 2 ;;
    esac
  done
  say "operators started: $list (logs: $run/logs/<name>-operator.log)"
}

operator_training() {
  say "building the Kubeflow training operator from Go modules"
  "$root/hack/build-tools.sh" "$bin" training-operator
  apply_crds "$root/bin/crds/pytorchjob"
  kubectl create namespace kubeflow --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # The training operator rotates its webhook certificate into this Secret
  # and will not start without it.
  kubectl -n kubeflow create secret generic training-operator-webhook-cert --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  # ...and injects its CA into this configuration before it starts its
  # controllers. It has no webhooks here: PyTorchJobs are not validated by
  # the operator on loopback (Muster's own webhooks still gate them).
  printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata:\n  name: validator.training-operator.kubeflow.org\n' |
    kubectl apply -f - >/dev/null
  stop training-operator
  # Its certificate controller expects the Secret mounted at a fixed path,
  # as in a pod, and waits for the files there; on loopback they are copied
  # there once generated. The path is shared by every local cluster on this
  # machine: a pair left by another one is removed first, and the new pair
  # replaces the directory in one rename — copied file by file, the
  # operator once read the new certificate with the old key ("tls: private
  # key does not match public key") and exited on a cold start.
  local certs=/tmp/k8s-webhook-server/serving-certs tmp
  mkdir -p "${certs%/*}"
  rm -rf "$certs"
  start training-operator env POD_NAMESPACE=kubeflow "$bin/training-operator" --kubeconfig "$kubeconfig" \
    --enable-scheme pytorchjob --leader-elect=false --metrics-bind-address 127.0.0.1:0 \
    --health-probe-bind-address 127.0.0.1:0 --webhook-server-port "$((webhook_port + 1))"
  wait_for "training-operator certificate" 60 operator_cert_generated
  tmp=$(mktemp -d "$certs.XXXXXX")
  for f in tls.crt tls.key; do
    kubectl -n kubeflow get secret training-operator-webhook-cert -o jsonpath="{.data.${f/./\\.}}" | base64 -d >"$tmp/$f"
  done
  chmod 755 "$tmp"
  rm -rf "$certs"
  mv -T "$tmp" "$certs"
}

operator_kuberay() {
  say "building the KubeRay operator from Go modules"
  "$root/hack/build-tools.sh" "$bin" kuberay-operator
  local ray; ray=$(cd "$root" && go list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)
  # The KubeRay operator also watches RayServices; it starts no controller
  # unless every CRD it watches is served.
  apply_crds "$root/bin/crds/raycluster" "$root/bin/crds/rayjob" "$ray/config/crd/bases/ray.io_rayservices.yaml"
  start kuberay-operator "$bin/kuberay-operator" --kubeconfig "$kubeconfig" --enable-leader-election=false \
    --metrics-addr 127.0.0.1:0 --health-probe-bind-address 127.0.0.1:0
}

# operator_jobset: the JobSet controller with its own webhooks (they default
# and validate JobSets, and label their pods), served on WEBHOOK_PORT+2 with
# the certificate Muster's webhook server uses (signed by the local CA).
operator_jobset() {
  say "building the JobSet controller from Go modules"
  "$root/hack/build-tools.sh" "$bin" jobset-operator
  apply_crds "$root/bin/crds/jobset"
  local js port=$((webhook_port + 2))
  js=$(cd "$root/hack/tools/jobset" && go list -m -f '{{.Dir}}' sigs.k8s.io/jobset)
  kubectl kustomize "$js/config/components/webhook" |
    (cd "$root" && go run ./hack/localwebhooks -url "https://127.0.0.1:$port" -ca "$run/pki/ca.crt" -prefix jobset-) |
    kubectl apply -f - >/dev/null
  controller_config "$run/jobset-config.yaml" config.jobset.x-k8s.io/v1alpha1 "$port"
  start jobset-operator "$bin/jobset-operator" --kubeconfig "$kubeconfig" --config "$run/jobset-config.yaml"
  wait_for "the JobSet webhooks" 60 webhook_serves "$port"
}

# operator_mpi: the MPI operator (MPIJob v2beta1). It has no webhooks; it
# elects a leader in the mpi-operator namespace and serves its health check
# on :8080, a port it does not let be changed.
operator_mpi() {
  say "building the MPI operator from Go modules"
  "$root/hack/build-tools.sh" "$bin" mpi-operator
  apply_crds "$root/bin/crds/mpijob"
  kubectl create namespace mpi-operator --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  start mpi-operator "$bin/mpi-operator" --kubeConfig "$kubeconfig" --lock-namespace mpi-operator
}

# operator_lws: the LeaderWorkerSet controller with its own webhooks (they
# default and validate LeaderWorkerSets and label their pods with their
# group), served on WEBHOOK_PORT+3 with Muster's webhook certificate.
operator_lws() {
  say "building the LeaderWorkerSet controller from Go modules"
  "$root/hack/build-tools.sh" "$bin" lws-operator
  local lws port=$((webhook_port + 3))
  lws=$(cd "$root/hack/tools/lws" && go list -m -f '{{.Dir}}' sigs.k8s.io/lws)
  # The controller also runs DisaggregatedSets, and waits for their CRD.
  apply_crds "$root/bin/crds/leaderworkerset" "$lws/config/crd/bases/disaggregatedset.x-k8s.io_disaggregatedsets.yaml"
  kubectl kustomize "$lws/config/webhook" |
    (cd "$root" && go run ./hack/localwebhooks -url "https://127.0.0.1:$port" -ca "$run/pki/ca.crt" -prefix lws-) |
    kubectl apply -f - >/dev/null
  kubectl create namespace lws-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  controller_config "$run/lws-config.yaml" config.lws.x-k8s.io/v1alpha1 "$port"
  start lws-operator "$bin/lws-operator" --kubeconfig "$kubeconfig" --config "$run/lws-config.yaml"
  wait_for "the LeaderWorkerSet webhooks" 60 webhook_serves "$port"
}

# operator_trainer: Kubeflow Trainer v2's controller manager (TrainJob on
# JobSet: start jobset first) with its own webhooks, served on
# WEBHOOK_PORT+4 with Muster's webhook certificate. It has no certificate
# directory setting: controller-runtime's default under TMPDIR is linked to
# the certificate.
operator_trainer() {
  say "building the Kubeflow Trainer controller from Go modules"
  "$root/hack/build-tools.sh" "$bin" trainer-operator
  local trainer port=$((webhook_port + 4))
  trainer=$(cd "$root/hack/tools/trainer" && go list -m -f '{{.Dir}}' github.com/kubeflow/trainer/v2)
  apply_crds "$root"/bin/crds/trainjob/*.yaml
  kubectl kustomize "$trainer/manifests/base/webhook" |
    (cd "$root" && go run ./hack/localwebhooks -url "https://127.0.0.1:$port" -ca "$run/pki/ca.crt" -prefix trainer-) |
    kubectl apply -f - >/dev/null
  mkdir -p "$run/trainer-tmp/k8s-webhook-server"
  ln -sfn "$run/pki/webhook" "$run/trainer-tmp/k8s-webhook-server/serving-certs"
  cat >"$run/trainer-config.yaml" <<CONFIG
apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
leaderElection:
  leaderElect: false
certManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $port
metrics:
  bindAddress: 127.0.0.1:0
  secureServing: false
health:
  healthProbeBindAddress: 127.0.0.1:0
CONFIG
  TMPDIR=$run/trainer-tmp KUBECONFIG=$kubeconfig start trainer-operator "$bin/trainer-operator" --config "$run/trainer-config.yaml"
  wait_for "the Kubeflow Trainer webhooks" 60 webhook_serves "$port"
}

# operator_appwrapper: CodeFlare's AppWrapper controller, without its
# webhooks: they take certificates only from their own rotator, for a
# Service's name, and what they add is not needed here (the controller and
# Muster both infer a component's pod sets from its kind). It reads its
# configuration from a ConfigMap of its namespace; its webhook server, had
# anything started it, would find Muster's certificate under TMPDIR.
operator_appwrapper() {
  say "building the AppWrapper controller from Go modules"
  "$root/hack/build-tools.sh" "$bin" appwrapper-operator
  apply_crds "$root/bin/crds/appwrapper"
  kubectl create namespace appwrapper-system --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >/dev/null <<CONFIG
apiVersion: v1
kind: ConfigMap
metadata:
  name: appwrapper-operator-config
  namespace: appwrapper-system
data:
  config.yaml: |
    webhooksEnabled: false
    controllerManager:
      metrics:
        bindAddress: "127.0.0.1:0"
      health:
        bindAddress: "127.0.0.1:0"
      leaderElection: false
CONFIG
  mkdir -p "$run/appwrapper-tmp/k8s-webhook-server"
  ln -sfn "$run/pki/webhook" "$run/appwrapper-tmp/k8s-webhook-server/serving-certs"
  TMPDIR=$run/appwrapper-tmp KUBECONFIG=$kubeconfig NAMESPACE=appwrapper-system start appwrapper-operator "$bin/appwrapper-operator"
}

# operator_autoscaler: the Kubernetes cluster autoscaler (a 2024-08-30
# master build, hack/tools/cluster-autoscaler) with its kwok cloud provider
# and ProvisioningRequests on (classes check-capacity and
# best-effort-atomic-scale-up.autoscaling.x-k8s.io). It runs in the
# namespace cluster-autoscaler, reading there the ConfigMaps below: one node
# group, `autoscaled`, of 0 to AUTOSCALER_MAX_NODES (default 4) nodes like
# those of nodes.sh (GPUS nvidia.com/gpu, 32 CPUs, 256Gi) labelled
# muster.dev/gpu=$AUTOSCALER_GPU (default a100) and
# muster.dev/nodegroup=autoscaled and tainted muster.dev/autoscaled=true:NoSchedule,
# so that only pods that tolerate it (a flavor's toleration) make it scale
# up: the other tests' pending pods must stay pending. It creates them as Node
# objects annotated kwok.x-k8s.io/node=fake, so kwok makes them Ready; it
# deletes them when it stops. JSON, not protobuf, to the API server: its
# ProvisioningRequest client shares the content type and cannot encode a
# custom resource as protobuf.
operator_autoscaler() {
  say "building the cluster autoscaler from Go modules"
  "$root/hack/build-tools.sh" "$bin" cluster-autoscaler
  make -s -C "$root" provisioning-crds
  apply_crds "$root/bin/crds/provisioningrequest"
  local ns=cluster-autoscaler gpus=${GPUS:-8}
  kubectl create namespace "$ns" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
  kubectl apply -f - >/dev/null <<CONFIG
apiVersion: v1
kind: ConfigMap
metadata:
  name: kwok-provider-config
  namespace: $ns
data:
  config: |
    apiVersion: v1alpha1
    readNodesFrom: configmap
    nodegroups:
      fromNodeLabelKey: muster.dev/nodegroup
    nodes:
      skipTaint: true
      gpuConfig:
        gpuLabelKey: muster.dev/gpu
        availableGPUTypes: {a100: {}, h100: {}}
    configmap:
      name: kwok-provider-templates
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kwok-provider-templates
  namespace: $ns
data:
  templates: |
    apiVersion: v1
    kind: List
    items:
    - apiVersion: v1
      kind: Node
      metadata:
        name: autoscaled
        annotations:
          kwok.x-k8s.io/node: fake
          node.alpha.kubernetes.io/ttl: "0"
          cluster-autoscaler.kwok.nodegroup/min-count: "0"
          cluster-autoscaler.kwok.nodegroup/max-count: "${AUTOSCALER_MAX_NODES:-4}"
        labels:
          kubernetes.io/os: linux
          type: kwok
          muster.dev/gpu: ${AUTOSCALER_GPU:-a100}
          muster.dev/nodegroup: autoscaled
      spec:
        taints: [{key: muster.dev/autoscaled, value: "true", effect: NoSchedule}]
      status:
        allocatable: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "$gpus"}
        capacity: {cpu: "32", memory: 256Gi, pods: "110", nvidia.com/gpu: "$gpus"}
CONFIG
  # Left running if it runs: stopped, it deletes its nodes (it reads the
  # ConfigMaps once, so a change takes a `down` or a stop of its own).
  if ! is_running cluster-autoscaler; then
    kubectl -n "$ns" delete configmap cluster-autoscaler-status --ignore-not-found >/dev/null
  fi
  KWOK_PROVIDER_MODE=local KUBECONFIG=$kubeconfig POD_NAMESPACE=$ns start cluster-autoscaler \
    "$bin/cluster-autoscaler" --kubeconfig "$kubeconfig" --cloud-provider kwok --namespace "$ns" \
    --enable-provisioning-requests --kube-api-content-type application/json --leader-elect=false \
    --address 127.0.0.1:0 --scan-interval "${AUTOSCALER_SCAN_INTERVAL:-2s}" --scale-down-enabled=false \
    --v "${AUTOSCALER_LOG_LEVEL:-2}"
  # It writes its status ConfigMap at the end of each loop.
  wait_for "the cluster autoscaler's first loop" 60 kubectl -n "$ns" get configmap cluster-autoscaler-status
}

# controller_config FILE APIVERSION PORT writes the Configuration that the
# kubebuilder-style operators (JobSet, LWS) share: no leader election, no
# certificate management of their own, webhooks on PORT with Muster's
# webhook certificate, metrics and health on free loopback ports.
controller_config() {
  cat >"$1" <<CONFIG
apiVersion: $2
kind: Configuration
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
webhook:
  host: 127.0.0.1
  port: $3
  certDir: $run/pki/webhook
metrics:
  bindAddress: 127.0.0.1:0
health:
  healthProbeBindAddress: 127.0.0.1:0
CONFIG
}

webhook_serves() {
  curl -s --cacert "$run/pki/ca.crt" -o /dev/null "https://127.0.0.1:$1/"
}

down() {
  for name in cluster-autoscaler appwrapper-operator trainer-operator lws-operator mpi-operator jobset-operator kuberay-operator training-operator muster kwok scheduler-plugins kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop "$name"
  done
  rm -rf "$run/etcd"
  say "cluster down (logs kept in $run/logs)"
}

status() {
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler scheduler-plugins kwok muster training-operator kuberay-operator jobset-operator mpi-operator lws-operator trainer-operator appwrapper-operator cluster-autoscaler; do
    if is_running "$name"; then echo "$name: running (pid $(cat "$run/pids/$name.pid"))"; else echo "$name: stopped"; fi
  done
}

case "${1:-}" in
  up) up ;;
  muster) muster ;;
  operators) operators ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|muster|operators|down|status" >&2; exit 2 ;;
esac
