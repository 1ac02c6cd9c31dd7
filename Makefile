# Muster's build. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN          ?= $(CURDIR)/bin
K8S_BIN      ?= $(BIN)/k8s
CONTROLLER_GEN ?= $(BIN)/controller-gen
OPENAPI_GEN    ?= $(BIN)/openapi-gen
GOLANGCI_LINT  ?= $(BIN)/golangci-lint
GO_TEST_FLAGS ?= -count=1
# The integration suites share one API server per package; two packages at a
# time keeps a 2-core machine responsive.
GO_TEST_PARALLEL ?= 2

export KUBEBUILDER_ASSETS := $(K8S_BIN)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs, RBAC and webhook configurations from markers, and the per-kind user roles and webhook patches from the job registry.
	$(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./apis/muster/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=manager-role webhook paths=./cmd/... paths=./controllers/... paths=./webhooks/... \
		output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook
	go run ./hack/genjobmanifests -config config

.PHONY: generate
generate: $(CONTROLLER_GEN) $(OPENAPI_GEN) ## Generate deepcopy code, and the OpenAPI definitions the visibility API server serves.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	$(OPENAPI_GEN) --output-dir apis/visibility/openapi --output-pkg github.com/musterhq/muster/apis/visibility/openapi \
		--output-file zz_generated.openapi.go --output-model-name-file zz_generated.model_name.go \
		--go-header-file hack/boilerplate.go.txt --report-filename /dev/null \
		$(foreach p,apis/meta/v1 runtime version api/resource,--readonly-pkg k8s.io/apimachinery/pkg/$(p) k8s.io/apimachinery/pkg/$(p)) \
		./apis/visibility/v1beta1

.PHONY: chart
chart: ## Regenerate the parts of charts/muster that mirror config/ (CRDs, RBAC, webhooks, Services).
	@rm -rf charts/muster/crds && mkdir -p charts/muster/crds && cp config/crd/bases/*.yaml charts/muster/crds/
	@hack/build-tools.sh $(K8S_BIN) kubectl
	$(K8S_BIN)/kubectl kustomize config/default | go run ./hack/genchart > charts/muster/templates/generated.yaml
	@mkdir -p charts/muster/files && cp config/prometheus/grafana-dashboard.json charts/muster/files/grafana-dashboard.json
	@sed -n '/^spec:$$/,$$p' config/prometheus/rules.yaml | tail -n +2 | sed 's/^  //' > charts/muster/files/prometheus-rules.yaml

.PHONY: sim
sim: ## Replay the fairness simulation's traces (test/sim/traces) on the core and regenerate its plots and numbers in docs/images.
	cd test/tools && go run ./cmd/muster-sim -out $(CURDIR)/docs/images -traces $(CURDIR)/test/sim/traces

.PHONY: fmt
fmt: $(GOLANGCI_LINT) ## Format the code: gofmt, and goimports with the module as local prefix.
	$(GOLANGCI_LINT) fmt

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint: staticcheck, import aliases, the pure core's import fence, kube-api-linter on apis/ (.golangci.yml).
	$(GOLANGCI_LINT) run

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: verify
verify: manifests generate chart lint ## Fail if generated files (CRDs, RBAC, webhooks, deepcopy, chart) are stale, code is unformatted, a go.mod is untidy or a linter objects.
	@# cluster-autoscaler's pinned pseudo-version has no .mod on the module
	@# proxy: a local file proxy serves it (from its zip) to that tidy.
	@for m in $$(git ls-files '*go.mod'); do d=$$(dirname $$m); p=$$(go env GOPROXY); \
		if [ $$d = hack/tools/cluster-autoscaler ]; then p=$$(hack/autoscaler-modproxy.sh $(BIN)/modproxy),$$p; fi; \
		(cd $$d && GOPROXY=$$p go mod tidy -diff >/dev/null) || { echo "$$m is untidy: run go mod tidy in $$d"; exit 1; }; done
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@git diff --exit-code --stat -- apis config charts && test -z "$$(git ls-files --others --exclude-standard -- apis config charts)" || \
		{ git ls-files --others --exclude-standard -- apis config charts; echo "generated files are stale: run make manifests generate chart and commit"; exit 1; }
	go vet ./...

##@ Test

.PHONY: test
test: envtest-assets test-unit test-integration ## Run all unit and integration tests (what CI runs).

.PHONY: test-unit
test-unit: ## Run unit tests (no API server), the fairness simulator's among them.
	go test $(GO_TEST_FLAGS) $$(go list ./... | grep -v /test/) ./test/sim/...

.PHONY: test-integration
test-integration: envtest-assets bench-bins ## Run integration tests against a real kube-apiserver and etcd (and the benchmark harness's smoke run, and the dashboard's browser test in the test/tools module).
	go test $(GO_TEST_FLAGS) -p $(GO_TEST_PARALLEL) ./test/integration/... ./test/bench/...
	cd test/tools && go test $(GO_TEST_FLAGS) ./...

.PHONY: soak
soak: envtest-assets ## Randomized soak (not in CI): SOAK_JOBS jobs, manager restarts every SOAK_RESTART_EVERY, conflicts.
	go test -tags soak -count=1 -timeout 60m -v -run TestSoak ./test/soak/

.PHONY: envtest-assets
envtest-assets: job-crds gang-crds cert-manager-crds prometheus-crds provisioning-crds ## Build etcd, kube-apiserver and kubectl from Go modules into bin/k8s (cached).
	@hack/build-tools.sh $(K8S_BIN) etcd kube-apiserver kubectl helm

# The CRDs of the registered job kinds (each adapter's Kind.CRD), taken by
# hack/jobcrds from the module cache at the versions go.mod pins (nothing is
# downloaded but modules) into bin/crds/<kind>, e.g. bin/crds/raycluster.
JOB_CRDS ?= $(BIN)/crds
.PHONY: job-crds
job-crds: ## Copy the CRDs of the registered job kinds (each kind's, and those of the objects it reads) from the module cache into bin/crds.
	@go run ./hack/jobcrds $(JOB_CRDS)

# The PodGroup CRDs of two gang schedulers, for tests, each rewritten only
# when the module pin it comes from changes:
#   bin/crds/volcano       scheduling.volcano.sh/v1beta1 PodGroup, generated by
#                          controller-gen from the types of volcano.sh/apis at the
#                          version hack/tools/volcano-apis pins (the module ships
#                          no CRD YAML)
#   bin/crds/coscheduling  scheduling.x-k8s.io/v1alpha1 PodGroup (Coscheduling),
#                          copied from sigs.k8s.io/scheduler-plugins at the version
#                          hack/tools/scheduler-plugins pins: config/crd/bases/
VOLCANO_PODGROUP_CRD := $(JOB_CRDS)/volcano/scheduling.volcano.sh_podgroups.yaml
COSCHEDULING_PODGROUP_CRD := $(JOB_CRDS)/coscheduling/scheduling.x-k8s.io_podgroups.yaml
.PHONY: gang-crds
gang-crds: $(VOLCANO_PODGROUP_CRD) $(COSCHEDULING_PODGROUP_CRD) ## Write the Volcano and Coscheduling PodGroup CRDs into bin/crds/volcano and bin/crds/coscheduling.
$(VOLCANO_PODGROUP_CRD): hack/tools/volcano-apis/go.mod hack/tools/volcano-apis/go.sum $(CONTROLLER_GEN)
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
		(cd hack/tools/volcano-apis && go mod download volcano.sh/apis && \
			$(CONTROLLER_GEN) crd paths=volcano.sh/apis/pkg/apis/scheduling/v1beta1 output:crd:dir="$$tmp") && \
		mkdir -p $(@D) && install -m 0644 "$$tmp/$(@F)" $@
$(COSCHEDULING_PODGROUP_CRD): hack/tools/scheduler-plugins/go.mod hack/tools/scheduler-plugins/go.sum
	@dir=$$(cd hack/tools/scheduler-plugins && go mod download sigs.k8s.io/scheduler-plugins && \
			go list -m -f '{{.Dir}}' sigs.k8s.io/scheduler-plugins) && \
		mkdir -p $(@D) && install -m 0644 "$$dir/config/crd/bases/$(@F)" $@

# cert-manager's CRDs (Issuer, Certificate, ...), which the tests of the
# cert-manager overlay (config/default-certmanager) and of the chart's
# certs.mode=cert-manager apply against. Muster does not import cert-manager,
# so the version is pinned here rather than in go.mod:
#   github.com/cert-manager/cert-manager@$(CERT_MANAGER_VERSION)  deploy/crds/*.yaml
CERT_MANAGER_VERSION ?= v1.21.2
.PHONY: cert-manager-crds
cert-manager-crds: ## Copy cert-manager's CRDs from its Go module into bin/crds/cert-manager.
	@mkdir -p $(JOB_CRDS)/cert-manager
	@dir=$$(go mod download -json github.com/cert-manager/cert-manager@$(CERT_MANAGER_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
		test -n "$$dir" || { echo "cert-manager $(CERT_MANAGER_VERSION) not downloaded"; exit 1; }; \
		install -m 0644 "$$dir"/deploy/crds/*.yaml $(JOB_CRDS)/cert-manager/

# The Prometheus Operator's ServiceMonitor CRD, which the test of
# config/prometheus applies against; pinned here for the same reason:
#   github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION)  example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml
PROMETHEUS_OPERATOR_VERSION ?= v0.85.0
.PHONY: prometheus-crds
prometheus-crds: ## Copy the Prometheus Operator's ServiceMonitor and PrometheusRule CRDs from its Go module into bin/crds/prometheus.
	@mkdir -p $(JOB_CRDS)/prometheus
	@dir=$$(go mod download -json github.com/prometheus-operator/prometheus-operator@$(PROMETHEUS_OPERATOR_VERSION) | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
		test -n "$$dir" || { echo "prometheus-operator $(PROMETHEUS_OPERATOR_VERSION) not downloaded"; exit 1; }; \
		install -m 0644 "$$dir"/example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml \
			"$$dir"/example/prometheus-operator-crd/monitoring.coreos.com_prometheusrules.yaml $(JOB_CRDS)/prometheus/

# The cluster autoscaler's ProvisioningRequest CRD (autoscaling.x-k8s.io/v1),
# which the ProvisioningRequest admission check creates, from the module
# go.mod pins for its types.
.PHONY: provisioning-crds
provisioning-crds: ## Copy the ProvisioningRequest CRD from k8s.io/autoscaler/cluster-autoscaler/apis into bin/crds/provisioningrequest.
	@mkdir -p $(JOB_CRDS)/provisioningrequest
	@dir=$$(go mod download -json k8s.io/autoscaler/cluster-autoscaler/apis | sed -n 's/^\t"Dir": "\(.*\)",$$/\1/p'); \
		test -n "$$dir" || { echo "k8s.io/autoscaler/cluster-autoscaler/apis not downloaded"; exit 1; }; \
		install -m 0644 "$$dir"/config/crd/autoscaling.x-k8s.io_provisioningrequests.yaml $(JOB_CRDS)/provisioningrequest/

##@ Benchmarks

BENCH_DIR ?= $(BIN)/bench
BENCH     ?= $(BENCH_DIR)/bench
# Kueue v0.19.2's scheduler is built in its own module (test/bench/kueue):
# it pins older k8s.io and controller-runtime releases than Muster.
KUEUE_MOD := cd test/bench/kueue &&
# Client limits of the runs: parity (both at QPS 50, burst 100, Kueue's
# performance test), kueue-defaults (both at Kueue v0.19's defaults, QPS 300,
# burst 500), unthrottled.
BENCH_MODES ?= parity,kueue-defaults,unthrottled

.PHONY: bench-bins
bench-bins: build ## Build the harness, Kueue's scheduler and Kueue's CRDs for the benchmarks (cached).
	go build -o $(BENCH) ./test/bench/cmd/bench
	$(KUEUE_MOD) go build -o $(BENCH_DIR)/kueue-bench .
	@mkdir -p $(BENCH_DIR)/kueue-crds
	@$(KUEUE_MOD) install -m 0644 "$$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"/config/components/crd/bases/*.yaml $(BENCH_DIR)/kueue-crds/

.PHONY: bench
bench: envtest-assets bench-bins ## Muster vs Kueue on the quick mix in the three modes (parity, kueue-defaults, unthrottled), plus the API server calibration (minutes).
	$(BENCH) calibrate -seconds 5 -out $(BENCH_DIR)/quick
	$(BENCH) run -config test/bench/configs/quick.yaml -modes $(BENCH_MODES) -reps 1 -out $(BENCH_DIR)/quick

# The full comparison's record is kept in the repository (each run's
# figures and the calibrations; samples, logs and profiles stay beside them,
# ignored), so the comparison resumes from a fresh clone and the
# documentation's table can be checked against its data.
BENCH_RECORD ?= test/bench/results/full

.PHONY: bench-full
bench-full: envtest-assets bench-bins ## Every suite (baseline, large-scale, TAS, the 10k sweep) for Muster and Kueue, parity and unthrottled, 3 interleaved runs each, each suite calibrated before and after; resumes where it stopped and writes docs/performance.md's acceptance table (many hours on 2 cores; BENCH_FULL_FOR=2h starts no run after two hours).
	$(BENCH) full -suites baseline,large-scale,tas,sweep -modes parity,unthrottled -reps 3 -out $(BENCH_RECORD) -doc docs/performance.md $(if $(BENCH_FULL_FOR),-start-runs-for $(BENCH_FULL_FOR))

.PHONY: bench-tas
bench-tas: envtest-assets bench-bins ## Muster vs Kueue on the quick TAS mix (64 nodes, 330 topology-aware workloads), the three modes, with the placement check (minutes).
	$(BENCH) run -config test/bench/configs/tas-quick.yaml -modes $(BENCH_MODES) -reps 1 -out $(BENCH_DIR)/tas-quick

.PHONY: bench-tas-full
bench-tas-full: envtest-assets bench-bins ## Kueue's TAS mix (640 nodes, 15,000 topology-aware workloads), the three modes x 3 runs (hours on 2 cores).
	$(BENCH) run -config test/bench/configs/tas.yaml -modes $(BENCH_MODES) -reps 3 -out $(BENCH_DIR)/tas

.PHONY: bench-large
bench-large: envtest-assets bench-bins ## Muster vs Kueue on the large-scale mix's 1,000 ClusterQueues with a tenth of its workloads (6,000), the three modes (tens of minutes).
	$(BENCH) run -config test/bench/configs/large-scale-quick.yaml -modes $(BENCH_MODES) -reps 1 -out $(BENCH_DIR)/large-quick

.PHONY: bench-large-full
bench-large-full: envtest-assets bench-bins ## Kueue's large-scale mix (1,000 ClusterQueues, 50,000 workloads), the three modes x 3 runs (many hours on 2 cores).
	$(BENCH) run -config test/bench/configs/large-scale.yaml -modes $(BENCH_MODES) -reps 3 -out $(BENCH_DIR)/large

.PHONY: bench-checks
bench-checks: envtest-assets bench-bins ## 1,000 workloads through an admission check answering Ready after 0-1 s, beside the same mix without it, Muster and Kueue at parity (minutes).
	$(BENCH) run -config test/bench/configs/checks.yaml -modes parity -reps 3 -out $(BENCH_DIR)/checks
	$(BENCH) run -config test/bench/configs/checks-none.yaml -modes parity -reps 3 -out $(BENCH_DIR)/checks-none

.PHONY: bench-multicluster
bench-multicluster: envtest-assets bench-bins ## Multi-cluster dispatch: 10 worker API servers, Muster and Kueue's MultiKueue side by side on 1,000 Jobs, then Muster alone on 10,000 at a rate 2 cores sustain (over an hour and a half).
	$(BENCH) multicluster -targets muster,kueue -workers 10 -workloads 1000 -interval 250ms -modes kueue-defaults -out $(BENCH_DIR)/multicluster-1k
	$(BENCH) multicluster -targets muster -workers 10 -workloads 10000 -interval 350ms -modes kueue-defaults -out $(BENCH_DIR)/multicluster-10k

.PHONY: bench-steady
bench-steady: envtest-assets bench-bins ## Muster vs Kueue on the steady-state mix (arrivals spread over 10 minutes at 80% of the calibrated API server ceiling), unthrottled, minute by minute (most of an hour).
	$(BENCH) run -config test/bench/configs/steady.yaml -modes unthrottled -reps 1 -timeline -out $(BENCH_DIR)/steady

##@ Local cluster

.PHONY: cluster-up
cluster-up: ## Start a local cluster (etcd, apiserver, controller-manager, scheduler, kwok GPU nodes) with Muster on it.
	hack/cluster.sh up
	hack/cluster.sh muster

.PHONY: cluster-down
cluster-down: ## Stop the local cluster's processes (and its worker clusters', if any).
	hack/multicluster.sh down
	hack/cluster.sh down

.PHONY: demo
demo: ## Local cluster + Muster + two 16-worker Jobs on 24 GPUs, admitted whole one after the other.
	hack/demo.sh

.PHONY: demo-cold
demo-cold: ## The demo on a cluster created from nothing (fresh MUSTER_RUN_DIR, default .run/cold: new etcd, no CRDs), then its objects deleted; the cluster stays up.
	hack/demo-cold.sh

# The suite's topology tests run on a 2x2x4 topology pool beside the demo's
# nodes (tainted: the other tests never see it); `up` adds it to a running
# cluster.
E2E_TOPOLOGY ?= 2x2x4
.PHONY: test-e2e
# The local cluster's Muster, however often the suite restarts it, gives up
# on a lost worker cluster after 20 s; the workers start only for the
# multi-cluster suite, after the others, which run as before on the cluster
# alone.
test-e2e: export MUSTER_WORKER_LOST_TIMEOUT = 20s
test-e2e: ## Run the end-to-end suite against the local cluster (started if needed, with its topology pool, gang schedulers, job operators and cluster autoscaler) and two worker clusters it dispatches to (hack/multicluster.sh).
	TOPOLOGY=$(E2E_TOPOLOGY) WORKLOAD_API=1 COSCHEDULING=1 hack/cluster.sh up
	hack/cluster.sh muster
	hack/cluster.sh operators
	OPERATORS=autoscaler hack/cluster.sh operators
	go test -tags e2e $(GO_TEST_FLAGS) -timeout 30m ./test/e2e/
	hack/multicluster.sh up
	go test -tags e2e $(GO_TEST_FLAGS) -timeout 10m ./test/e2e/multicluster/

##@ Build

.PHONY: build
build: ## Build the manager and the kubectl plugin (bin/kubectl-muster: put bin/ on PATH for `kubectl muster`).
	go build -o $(BIN)/muster ./cmd/muster
	go build -o $(BIN)/kubectl-muster ./cmd/kubectl-muster

.PHONY: run
run: manifests ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/muster --config config/manager/controller_manager_config.yaml

$(CONTROLLER_GEN): hack/tools/gen/go.mod hack/tools/gen/go.sum
	cd hack/tools/gen && go build -o $(CONTROLLER_GEN) sigs.k8s.io/controller-tools/cmd/controller-gen

$(OPENAPI_GEN): hack/tools/gen/go.mod hack/tools/gen/go.sum
	cd hack/tools/gen && go build -o $(OPENAPI_GEN) k8s.io/kube-openapi/cmd/openapi-gen

# golangci-lint with the Kube API Linter built in (one binary).
$(GOLANGCI_LINT): hack/tools/lint/go.mod hack/tools/lint/go.sum
	cd hack/tools/lint && go build -o $(GOLANGCI_LINT) sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter
