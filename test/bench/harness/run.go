package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Modes of a run: the client limits both controllers get.
const (
	// Parity gives both controllers the client limits of Kueue's
	// performance test (its minimalkueue: QPS 50, burst 100, also Kueue
	// v0.17's shipped configuration).
	Parity = "parity"
	// KueueDefaults gives both controllers Kueue v0.19.2's default client
	// limits (QPS 300, burst 500: its defaults and shipped configuration).
	KueueDefaults = "kueue-defaults"
	// Unthrottled lifts the client limits: the API server is the limit.
	Unthrottled = "unthrottled"
)

// Modes are the modes in the order the reports show them.
var Modes = []string{Parity, KueueDefaults, Unthrottled}

// clientLimits are the QPS and burst of a mode.
func clientLimits(mode string) (float32, int, error) {
	switch mode {
	case Parity:
		return 50, 100, nil
	case KueueDefaults:
		return 300, 500, nil
	case Unthrottled:
		return 1e6, 1e6, nil
	}
	return 0, 0, fmt.Errorf("unknown mode %q (want one of %s)", mode, strings.Join(Modes, ", "))
}

// RunSpec is one run of a mix against one target.
type RunSpec struct {
	Config     *Config
	ConfigName string
	Target     Target
	Mode       string
	// Dir receives the target's log, its config and the audit log.
	Dir string
	// Timeout bounds the run (default 30 minutes).
	Timeout time.Duration
	// Profile, when set, takes a CPU profile of the target over this long,
	// from 10 s into the run, into Dir/cpu.pprof.
	Profile time.Duration
}

// Result is what one run measured.
type Result struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	Config string `json:"config"`
	// Build names the code the target's binary runs (buildOf: Muster's
	// commit, Kueue's version), so a kept record says what it measured.
	Build     string `json:"build,omitempty"`
	Workloads int    `json:"workloads"`
	Finished  int    `json:"finished"`
	// WallSeconds is from the first creation to the last finish.
	WallSeconds float64 `json:"wallSeconds"`
	// AdmissionsPerSecond is workloads admitted over the time from the first
	// creation to the last first admission.
	AdmissionsPerSecond float64 `json:"admissionsPerSecond"`
	// PeakAdmissionsPerSecond is the best 5 s window, re-admissions included.
	PeakAdmissionsPerSecond float64 `json:"peakAdmissionsPerSecond"`
	// TimeToAdmission per class: creation to first admission.
	TimeToAdmission map[string]Distribution `json:"timeToAdmission"`
	// Samples per class (ms), for plots.
	Samples map[string][]float64 `json:"samples,omitempty"`
	// Utilization is the quota held over time, as a fraction of the sum of
	// nominal quotas over the wall time.
	Utilization float64 `json:"utilization"`
	Evictions   int     `json:"evictions"`
	// EvictionsOverdue are the evictions of workloads that had held quota
	// past their runtime when evicted, by the scheduler's condition times:
	// the harness's kubelet had not yet finished them (wlView.heldPastRuntime).
	EvictionsOverdue int `json:"evictionsOverdue"`
	// EvictionsOverdueSeenLate are those of EvictionsOverdue whose admission
	// the harness's watch delivered too late for the kubelet's runtime to
	// end before the eviction (wlView.kubeletLate); not counted in runs
	// whose AdmissionSeenLag is empty (recorded before it was).
	EvictionsOverdueSeenLate int `json:"evictionsOverdueSeenLate"`
	// AdmissionSeenLag is how long after the scheduler's QuotaReserved time
	// the harness (its kubelet) saw each admission; that time is whole
	// seconds, so each lag is up to 1 s longer than the real one. Count 0
	// in runs recorded before it was measured.
	AdmissionSeenLag Distribution `json:"admissionSeenLag"`
	Usage            Usage        `json:"usage"`
	// Requests are the target's API requests.
	Requests Requests `json:"requests"`
	// RequestsPerWorkload is Requests.ByVerb divided by the workloads.
	RequestsPerWorkload map[string]float64 `json:"requestsPerWorkload"`
	WritesPerWorkload   float64            `json:"writesPerWorkload"`
	// HarnessWrites are the generator's creates plus the kubelet's writes
	// (and the admission check's answers, in a mix with one).
	HarnessWrites int `json:"harnessWrites"`
	// KubeletRetries counts the kubelet's writes tried again after a
	// failure other than a conflict (the API server timing out under load).
	KubeletRetries int `json:"kubeletRetries,omitempty"`
	// APIServerCPUSeconds is the API server's CPU time during the run:
	// what all clients' requests cost it.
	APIServerCPUSeconds float64 `json:"apiServerCPUSeconds"`
	// ControlPlaneNice is the CPU priority the API server and etcd ran at
	// (ControlPlaneNice, or 0 where the harness could not raise it, and in
	// runs recorded before it did).
	ControlPlaneNice int `json:"controlPlaneNice,omitempty"`
	// MachineBusy is the share of all the machine's cores busy during the
	// run (every process: API server, etcd, target, harness); 0
	// in runs recorded before it was measured.
	MachineBusy float64 `json:"machineBusy,omitempty"`
	// HarnessCPUSeconds is the harness's own CPU during the run (generator,
	// kubelet, checks).
	HarnessCPUSeconds float64 `json:"harnessCPUSeconds,omitempty"`
	// APIServer is the API server's own account of the run, when sampled.
	APIServer *APIServerLoad `json:"apiServer,omitempty"`
	// Placement is the check of every admitted placement against the
	// nodes, in a topology-aware mix.
	Placement *PlacementStats `json:"placement,omitempty"`
	// Timeline is the run minute by minute.
	Timeline []Window `json:"timeline,omitempty"`
}

// QueueStatusWritesPerWorkload is the part of WritesPerWorkload that
// writes queue status.
func (r *Result) QueueStatusWritesPerWorkload() float64 {
	return r.perWorkload(r.Requests.QueueStatusWrites())
}

// WorkloadWritesPerWorkload is the part of WritesPerWorkload that writes
// the Workloads themselves and their events: 2.0 at the floor (an
// admission, and an event saying so).
func (r *Result) WorkloadWritesPerWorkload() float64 {
	return r.perWorkload(r.Requests.WorkloadWrites())
}

// perWorkload is n over the run's workloads (0 for a run of none).
func (r *Result) perWorkload(n int) float64 {
	if r.Workloads == 0 {
		return 0
	}
	return float64(n) / float64(r.Workloads)
}

// apiSampleInterval is how often a run scrapes the API server's metrics:
// the window of the peak write rate.
const apiSampleInterval = 5 * time.Second

// Run starts an API server and the target, runs the mix to the end and
// returns the measurements.
func Run(ctx context.Context, spec RunSpec) (*Result, error) {
	qps, burst, err := clientLimits(spec.Mode)
	if err != nil {
		return nil, err
	}
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Minute
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return nil, err
	}
	api, err := StartAPIServer(spec.Dir, spec.Target.CRDDir)
	if err != nil {
		return nil, err
	}
	stopped := false
	stopAPI := func() {
		if !stopped {
			stopped = true
			api.Stop()
		}
	}
	defer stopAPI()
	ctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	defer cancel()
	if err := api.waitEstablished(ctx, spec.Target); err != nil {
		return nil, err
	}
	plan := spec.Config.Plan()
	if err := createQueues(ctx, api, spec.Target, plan); err != nil {
		return nil, err
	}
	if err := warmUpWatchCache(ctx, api, spec.Target); err != nil {
		return nil, err
	}
	pprofAddr := ""
	if spec.Profile > 0 {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	proc, err := StartProcess(spec.Target, Launch{Dir: spec.Dir, Kubeconfig: api.TargetKubeconfig, QPS: qps, Burst: burst,
		Pprof: pprofAddr, TAS: plan.TopologyAware})
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = proc.Stop() }()
	if err := waitQueuesActive(ctx, api, spec.Target, len(plan.Queues), proc.Exited()); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, proc.tailLog(20))
	}

	rec := NewRecorder()
	kubelet := NewKubelet(api.Dynamic, spec.Target, rec, ClassLabel)
	var placements *Placements
	if plan.TopologyAware {
		placements = NewPlacements(spec.Target, plan.Topology)
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := placements.Watch(watchCtx, api.Dynamic, spec.Target, ClassLabel); err != nil {
		return nil, err
	}
	if err := kubelet.Start(watchCtx, kubeletWorkers); err != nil {
		return nil, err
	}
	var checker *Checker
	if plan.AdmissionCheck != nil {
		checker = NewChecker(api.Dynamic, spec.Target, plan.AdmissionCheck, ClassLabel)
		if err := checker.Start(watchCtx); err != nil {
			return nil, err
		}
	}
	apiCPU0, err := api.CPUSeconds()
	if err != nil {
		return nil, err
	}
	sampler, err := newAPISampler(api.Config, apiSampleInterval)
	if err != nil {
		return nil, err
	}
	if err := sampler.Start(watchCtx); err != nil {
		return nil, err
	}
	machine, err := machineLoad()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if pprofAddr != "" {
		go profile(watchCtx, pprofAddr, spec.Profile, spec.Dir)
	}
	genErr := make(chan error, 1)
	go func() { genErr <- generate(ctx, api, spec.Target, plan, rec, placements) }()
	if err := waitFinished(ctx, rec, plan.Workloads(), genErr, proc); err != nil {
		return nil, err
	}
	end := time.Now()
	busy, harnessCPU := machine()
	apiCPU1, err := api.CPUSeconds()
	if err != nil {
		return nil, err
	}
	load, err := sampler.Finish(ctx)
	if err != nil {
		return nil, err
	}
	placements.CatchUp(ctx, kubelet.NewestVersion(), 30*time.Second)
	usage, err := proc.Stop()
	if err != nil {
		return nil, err
	}
	stopWatch()
	stopAPI() // flushes the audit log
	reqs, err := countRequests(api.AuditLog, start, end)
	if err != nil {
		return nil, err
	}
	res := rec.result(plan, start)
	res.Target, res.Mode, res.Config = spec.Target.Name, spec.Mode, spec.ConfigName
	res.Build = buildOf(spec.Target.Binary)
	res.Usage, res.Requests = usage, reqs
	res.Placement = placements.Stats()
	res.HarnessWrites = plan.Workloads() + kubelet.Writes()
	res.KubeletRetries = kubelet.Retries()
	if checker != nil {
		res.HarnessWrites += checker.Writes()
	}
	res.APIServerCPUSeconds = apiCPU1 - apiCPU0
	res.ControlPlaneNice = api.Nice
	res.APIServer = load
	res.MachineBusy, res.HarnessCPUSeconds = busy, harnessCPU
	res.RequestsPerWorkload = map[string]float64{}
	for verb, n := range reqs.ByVerb {
		res.RequestsPerWorkload[verb] = float64(n) / float64(res.Workloads)
	}
	res.WritesPerWorkload = float64(reqs.Writes()) / float64(res.Workloads)
	return res, nil
}

// waitFinished waits for every workload to finish, the generator to fail,
// the target to exit, or the timeout.
func waitFinished(ctx context.Context, rec *Recorder, total int, genErr <-chan error, proc *Process) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for rec.Finished() < total {
		select {
		case err := <-genErr:
			if err != nil {
				return err
			}
		case <-proc.Exited():
			return fmt.Errorf("the target exited during the run:\n%s", proc.tailLog(20))
		case <-ctx.Done():
			adm, all := rec.Admitted("")
			return fmt.Errorf("run timed out: %d of %d finished, %d of %d admitted", rec.Finished(), total, adm, all)
		case <-rec.changed:
		case <-tick.C:
		}
	}
	return nil
}

// result computes the run's measurements from the timelines.
func (r *Recorder) result(plan Plan, start time.Time) *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &Result{Workloads: len(r.workloads), Finished: r.finished, Evictions: r.evictions, EvictionsOverdue: r.overdue,
		EvictionsOverdueSeenLate: r.overdueSeenLate, AdmissionSeenLag: Summarize(r.seenLags),
		TimeToAdmission: map[string]Distribution{}, Samples: map[string][]float64{}}
	var lastAdmit, lastFinish time.Time
	var held float64
	for _, t := range r.workloads {
		if t.admitted.After(lastAdmit) {
			lastAdmit = t.admitted
		}
		if t.finished.After(lastFinish) {
			lastFinish = t.finished
		}
		held += t.held()
		if !t.admitted.IsZero() {
			res.Samples[t.class] = append(res.Samples[t.class], float64(t.admitted.Sub(t.created).Microseconds())/1000)
		}
	}
	for class, s := range res.Samples {
		res.TimeToAdmission[class] = Summarize(s)
	}
	res.WallSeconds = lastFinish.Sub(start).Seconds()
	if d := lastAdmit.Sub(start).Seconds(); d > 0 {
		n := 0
		for _, s := range res.Samples {
			n += len(s)
		}
		res.AdmissionsPerSecond = float64(n) / d
	}
	res.PeakAdmissionsPerSecond = peakRate(r.admissions, 5*time.Second)
	res.Timeline = r.windows(start, plan.Capacity())
	if res.WallSeconds > 0 {
		res.Utilization = held / (float64(plan.Capacity()) * res.WallSeconds)
	}
	return res
}

// profile saves a CPU profile of the target, from 10 s into the run, and
// a heap profile at its end.
func profile(ctx context.Context, addr string, d time.Duration, dir string) {
	if !sleepUntil(ctx, time.Now().Add(10*time.Second)) {
		return
	}
	base := "http://" + addr + "/debug/pprof/"
	save(ctx, fmt.Sprintf("%sprofile?seconds=%d", base, int(d.Seconds())), filepath.Join(dir, "cpu.pprof"))
	save(ctx, base+"heap", filepath.Join(dir, "heap.pprof"))
}

// save writes what a URL returns to path; a failure leaves no file.
func save(ctx context.Context, url, path string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}
