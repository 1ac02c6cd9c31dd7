package harness

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
)

// MultiClusterSpec is one run of the multi-cluster dispatch: a manager API
// server with the target, Workers worker API servers, and Workloads batch
// Jobs submitted to the manager's queue, whose ClusterQueue has the
// target's multi-cluster admission check.
type MultiClusterSpec struct {
	Target Target
	Mode   string
	// Workers is the number of worker clusters; WorkerSlots how many
	// copies each admits at once (its quota, in one-cpu workloads).
	Workers, WorkerSlots int
	// Workloads are created one every Interval; each runs RuntimeMs once
	// its copy is admitted in a worker.
	Workloads int
	Interval  time.Duration
	RuntimeMs int
	// Dispatcher is AllAtOnce or Incremental.
	Dispatcher string
	Dir        string
	Timeout    time.Duration
}

// MultiClusterResult is what a dispatch run measured.
type MultiClusterResult struct {
	Target      string  `json:"target"`
	Mode        string  `json:"mode"`
	Dispatcher  string  `json:"dispatcher"`
	Workers     int     `json:"workers"`
	Workloads   int     `json:"workloads"`
	Finished    int     `json:"finished"`
	WallSeconds float64 `json:"wallSeconds"`
	// Dispatch is from a job's creation in the manager to its workload's
	// check turning Ready there (a worker admitted its copy; its job is
	// created there).
	Dispatch Distribution `json:"dispatchMs"`
	// ManagerRequests are the target's requests to the manager's API
	// server; WorkerRequests its requests to all the workers'.
	ManagerRequests          Requests `json:"managerRequests"`
	WorkerRequests           Requests `json:"workerRequests"`
	ManagerWritesPerWorkload float64  `json:"managerWritesPerWorkload"`
	WorkerWritesPerWorkload  float64  `json:"workerWritesPerWorkload"`
	// PerWorker is how many workloads ran in each worker.
	PerWorker map[string]int `json:"perWorker"`
	Usage     Usage          `json:"usage"`
}

const (
	mcNamespace = "bench"
	mcCheck     = "dispatch"
	mcQueue     = "main"
)

// RunMultiCluster runs one dispatch run.
func RunMultiCluster(ctx context.Context, spec MultiClusterSpec, log io.Writer) (*MultiClusterResult, error) {
	qps, burst, err := clientLimits(spec.Mode)
	if err != nil {
		return nil, err
	}
	mgr, workers, stop, err := startClusters(spec)
	// The harness's watches end before the API servers stop (deferred
	// calls run last first), or the API servers wait for them.
	defer stop()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	if err := setUpManager(ctx, mgr, workers, spec); err != nil {
		return nil, err
	}
	stubs, err := startWorkerStubs(ctx, workers, spec)
	if err != nil {
		return nil, err
	}
	proc, err := StartProcess(spec.Target, Launch{
		Dir: spec.Dir, Kubeconfig: mgr.TargetKubeconfig, QPS: qps, Burst: burst,
		MultiClusterDispatcher: spec.Dispatcher,
	})
	if err != nil {
		return nil, err
	}
	procStopped := false
	defer func() {
		if !procStopped {
			_, _ = proc.Stop()
		}
	}()
	if err := waitQueuesActive(ctx, mgr, spec.Target, 1, proc.Exited()); err != nil {
		return nil, fmt.Errorf("the dispatching queue never became active: %w\n%s", err, proc.tailLog(20))
	}
	fmt.Fprintf(log, "%s %s: %d jobs to %d workers (%s)\n", spec.Target.Name, spec.Mode, spec.Workloads, spec.Workers, spec.Dispatcher)
	rec := newDispatchRecorder()
	if err := rec.watch(ctx, mgr, spec.Target); err != nil {
		return nil, err
	}
	if err := rec.warmUp(ctx, mgr, spec.Target, spec.RuntimeMs, proc); err != nil {
		return nil, err
	}
	start := time.Now()
	genErr := make(chan error, 1)
	go func() { genErr <- submitJobs(ctx, mgr, spec, rec) }()
	if err := rec.waitFinished(ctx, spec.Workloads, genErr, proc); err != nil {
		return nil, err
	}
	wall := time.Since(start)
	usage, err := proc.Stop()
	procStopped = true
	if err != nil {
		return nil, err
	}
	return rec.result(spec, start, wall, usage, mgr, workers, stubs)
}

// startClusters starts the manager's API server and the workers'.
func startClusters(spec MultiClusterSpec) (*APIServer, []*APIServer, func(), error) {
	var all []*APIServer
	stop := func() {
		for _, a := range all {
			a.Stop()
		}
	}
	for i := 0; i <= spec.Workers; i++ {
		dir := filepath.Join(spec.Dir, "manager")
		if i > 0 {
			dir = filepath.Join(spec.Dir, fmt.Sprintf("worker%d", i))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, stop, err
		}
		a, err := StartAPIServer(dir, spec.Target.CRDDir)
		if err != nil {
			return nil, nil, stop, err
		}
		all = append(all, a)
	}
	return all[0], all[1:], stop, nil
}

// setUpManager creates the manager's queue with the dispatch check and a
// MultiCluster per worker, whose Secret is the worker's target kubeconfig,
// and the namespace and queue in every worker.
func setUpManager(ctx context.Context, mgr *APIServer, workers []*APIServer, spec MultiClusterSpec) error {
	t := spec.Target
	var clusters []any
	for i, w := range workers {
		name := fmt.Sprintf("worker%d", i+1)
		clusters = append(clusters, name)
		kc, err := os.ReadFile(w.TargetKubeconfig)
		if err != nil {
			return err
		}
		secret := &unstructured.Unstructured{Object: map[string]any{
			"data": map[string]any{"kubeconfig": base64.StdEncoding.EncodeToString(kc)},
		}}
		secret.SetAPIVersion("v1")
		secret.SetKind("Secret")
		secret.SetNamespace("default")
		secret.SetName(name)
		if err := createAll(ctx, mgr, secret, t.object(t.multiCluster.clusterKind, "", name, t.multiCluster.clusterSpec(name))); err != nil {
			return err
		}
		if err := createNamespaceAndQueue(ctx, w, t, spec.WorkerSlots, false); err != nil {
			return err
		}
	}
	ac := t.object("AdmissionCheck", "", mcCheck, map[string]any{
		"controllerName": t.multiCluster.controller,
		"parameters":     map[string]any{"apiGroup": t.GroupVersion.Group, "kind": t.multiCluster.configKind, "name": mcCheck},
	})
	if err := createAll(ctx, mgr, t.object(t.multiCluster.configKind, "", mcCheck, map[string]any{"clusters": clusters}), ac); err != nil {
		return err
	}
	return createNamespaceAndQueue(ctx, mgr, t, spec.Workloads, true)
}

// createNamespaceAndQueue creates the namespace, the flavor, a ClusterQueue
// of quota one-cpu workloads (with the dispatch check in the manager) and
// the LocalQueue.
func createNamespaceAndQueue(ctx context.Context, a *APIServer, t Target, quota int, manager bool) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(mcNamespace)
	cq := t.ClusterQueue(QueuePlan{Name: mcQueue, NominalQuota: *resource.NewQuantity(int64(quota), resource.DecimalSI)}, "default")
	if manager {
		_ = unstructured.SetNestedSlice(cq.Object, []any{map[string]any{"name": mcCheck}}, "spec", "admissionChecksStrategy", "admissionChecks")
	}
	return createAll(ctx, a, ns, t.ResourceFlavor(Plan{Flavor: "default"}), cq, t.LocalQueue(mcNamespace, mcQueue, mcQueue))
}

func createAll(ctx context.Context, a *APIServer, objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		res := gvrOf(gvk)
		var err error
		if o.GetNamespace() != "" {
			_, err = a.Dynamic.Resource(res).Namespace(o.GetNamespace()).Create(ctx, o, metav1.CreateOptions{})
		} else {
			_, err = a.Dynamic.Resource(res).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", gvk.Kind, o.GetName(), err)
		}
	}
	return nil
}

func gvrOf(gvk schema.GroupVersionKind) schema.GroupVersionResource {
	plural := map[string]string{"Secret": "secrets", "Namespace": "namespaces", "Job": "jobs"}[gvk.Kind]
	if plural == "" {
		return Target{GroupVersion: gvk.GroupVersion()}.Resource(gvk.Kind)
	}
	return gvk.GroupVersion().WithResource(plural)
}

// submitJobs creates the batch Jobs, one every Interval, each handed to
// the dispatch (spec.managedBy) and suspended as the target's webhook
// would (the harness installs no webhooks).
func submitJobs(ctx context.Context, mgr *APIServer, spec MultiClusterSpec, rec *dispatchRecorder) error {
	jobs := mgr.Dynamic.Resource(schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}).Namespace(mcNamespace)
	next := time.Now()
	return forEach(spec.Workloads, 16, func(i int) error {
		rec.mu.Lock()
		at := next
		next = next.Add(spec.Interval)
		rec.mu.Unlock()
		if !sleepUntil(ctx, at) {
			return ctx.Err()
		}
		name := fmt.Sprintf("job-%05d", i)
		j := batchJob(spec.Target, name, spec.RuntimeMs)
		rec.created(name, time.Now())
		_, err := jobs.Create(ctx, j, metav1.CreateOptions{})
		return err
	})
}

func batchJob(t Target, name string, runtimeMs int) *unstructured.Unstructured {
	j := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"suspend":   true,
			"managedBy": t.multiCluster.managedBy,
			"template": map[string]any{
				"metadata": map[string]any{"annotations": map[string]any{RuntimeLabel: fmt.Sprint(runtimeMs)}},
				"spec": map[string]any{
					"restartPolicy": string(corev1.RestartPolicyNever),
					"containers": []any{map[string]any{
						"name": "c", "image": "registry.k8s.io/pause:3.10",
						"resources": map[string]any{"requests": map[string]any{"cpu": "1"}},
					}},
				},
			},
		},
	}}
	j.SetAPIVersion("batch/v1")
	j.SetKind("Job")
	j.SetNamespace(mcNamespace)
	j.SetName(name)
	j.SetLabels(map[string]string{t.multiCluster.queueLabel: mcQueue})
	return j
}

// dispatchRecorder follows the manager's workloads: when each was
// dispatched and whether it finished.
type dispatchRecorder struct {
	mu         sync.Mutex
	createdAt  map[string]time.Time // by job name
	dispatched map[string]float64   // ms, by job name
	cluster    map[string]string
	finished   map[string]bool
}

func newDispatchRecorder() *dispatchRecorder {
	return &dispatchRecorder{createdAt: map[string]time.Time{}, dispatched: map[string]float64{},
		cluster: map[string]string{}, finished: map[string]bool{}}
}

func (r *dispatchRecorder) created(job string, at time.Time) {
	r.mu.Lock()
	r.createdAt[job] = at
	r.mu.Unlock()
}

func (r *dispatchRecorder) watch(ctx context.Context, mgr *APIServer, t Target) error {
	inf := workloadInformer(mgr.Dynamic, t, "")
	handler := func(o any) {
		if u, ok := o.(*unstructured.Unstructured); ok {
			r.observe(u, time.Now())
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: handler, UpdateFunc: func(_, n any) { handler(n) }}); err != nil {
		return err
	}
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return ctx.Err()
	}
	return nil
}

func (r *dispatchRecorder) observe(u *unstructured.Unstructured, at time.Time) {
	refs := u.GetOwnerReferences()
	if len(refs) == 0 {
		return
	}
	job := refs[0].Name
	r.mu.Lock()
	defer r.mu.Unlock()
	if created, ok := r.createdAt[job]; ok && dispatchState(u) == "Ready" {
		if _, seen := r.dispatched[job]; !seen {
			r.dispatched[job] = float64(at.Sub(created)) / float64(time.Millisecond)
			r.cluster[job], _, _ = unstructured.NestedString(u.Object, "status", "clusterName")
		}
	}
	if _, ok := r.createdAt[job]; ok && isConditionTrue(u, "Finished") {
		r.finished[job] = true
	}
}

// warmUp dispatches one job and waits for it to finish, so that the run
// measures a manager that runs (its controllers started, the workers
// connected), not its start; the job is then forgotten.
func (r *dispatchRecorder) warmUp(ctx context.Context, mgr *APIServer, t Target, runtimeMs int, proc *Process) error {
	jobs := mgr.Dynamic.Resource(jobsGVR).Namespace(mcNamespace)
	r.created("warm-up", time.Now())
	if _, err := jobs.Create(ctx, batchJob(t, "warm-up", runtimeMs), metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := r.waitFinished(ctx, 1, nil, proc); err != nil {
		return fmt.Errorf("warming up: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.createdAt, r.dispatched, r.cluster, r.finished = map[string]time.Time{}, map[string]float64{}, map[string]string{}, map[string]bool{}
	return nil
}

func (r *dispatchRecorder) finishedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.finished)
}

func (r *dispatchRecorder) waitFinished(ctx context.Context, total int, genErr <-chan error, proc *Process) error {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for r.finishedCount() < total {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d workloads finished: %w", r.finishedCount(), total, ctx.Err())
		case err := <-genErr:
			if err != nil {
				return fmt.Errorf("submitting jobs: %w", err)
			}
		case <-proc.Exited():
			return fmt.Errorf("the target exited:\n%s", proc.tailLog(20))
		case <-t.C:
		}
	}
	return nil
}

func (r *dispatchRecorder) result(spec MultiClusterSpec, start time.Time, wall time.Duration, usage Usage, mgr *APIServer, workers []*APIServer, stubs []*workerStub) (*MultiClusterResult, error) {
	res := &MultiClusterResult{
		Target: spec.Target.Name, Mode: spec.Mode, Dispatcher: spec.Dispatcher, Workers: spec.Workers,
		Workloads: spec.Workloads, Finished: r.finishedCount(), WallSeconds: wall.Seconds(), Usage: usage,
		PerWorker: map[string]int{},
	}
	r.mu.Lock()
	samples := make([]float64, 0, len(r.dispatched))
	for job, ms := range r.dispatched {
		samples = append(samples, ms)
		res.PerWorker[r.cluster[job]]++
	}
	r.mu.Unlock()
	res.Dispatch = Summarize(samples)
	var err error
	if res.ManagerRequests, err = countRequests(mgr.AuditLog, start, time.Time{}); err != nil {
		return nil, err
	}
	res.WorkerRequests = Requests{ByVerb: map[string]int{}, ByResource: map[string]int{}}
	for _, w := range workers {
		req, err := countRequests(w.AuditLog, start, time.Time{})
		if err != nil {
			return nil, err
		}
		for k, v := range req.ByVerb {
			res.WorkerRequests.ByVerb[k] += v
		}
		for k, v := range req.ByResource {
			res.WorkerRequests.ByResource[k] += v
		}
	}
	n := float64(spec.Workloads)
	res.ManagerWritesPerWorkload = float64(res.ManagerRequests.Writes()) / n
	res.WorkerWritesPerWorkload = float64(res.WorkerRequests.Writes()) / n
	return res, nil
}

// SaveMultiCluster writes a result as JSON into dir.
func SaveMultiCluster(dir string, res *MultiClusterResult) error {
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "result.json"), data, 0o644)
}

// dispatchState is the state of a manager workload's dispatch check.
func dispatchState(u *unstructured.Unstructured) string {
	checks, _, _ := unstructured.NestedSlice(u.Object, "status", "admissionChecks")
	for _, ch := range checks {
		if m, ok := ch.(map[string]any); ok && m["name"] == mcCheck {
			s, _ := m["state"].(string)
			return s
		}
	}
	return ""
}
