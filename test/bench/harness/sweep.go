package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// SweepResult is one target at one pending depth: depth workloads that
// cannot fit (their ClusterQueue's quota is held by a workload that never
// finishes), then a probe stream into another ClusterQueue with room.
type SweepResult struct {
	Target string `json:"target"`
	Mode   string `json:"mode"`
	Depth  int    `json:"depth"`
	// CreateSeconds is how long creating the backlog took.
	CreateSeconds float64 `json:"createSeconds"`
	// SettleSeconds is from the end of creation until the target stopped
	// writing (or the cap); SettleWrites are its writes meanwhile.
	SettleSeconds float64 `json:"settleSeconds"`
	SettleWrites  int     `json:"settleWrites"`
	Settled       bool    `json:"settled"`
	// IdleCPUCores is the target's CPU use while nothing changes;
	// IdleWritesPerMinute its API writes meanwhile (should be ~0).
	IdleCPUCores        float64 `json:"idleCPUCores"`
	IdleWritesPerMinute float64 `json:"idleWritesPerMinute"`
	// Probe is the probes' time to admission.
	Probe     Distribution `json:"probe"`
	MaxRSSMiB float64      `json:"maxRSSMiB"`
	// MaxRSSOwn: as Usage.MaxRSSOwn.
	MaxRSSOwn bool `json:"maxRSSOwn,omitempty"`
}

// SweepParams shape a sweep run.
type SweepParams struct {
	// Probes are submitted one every ProbeInterval.
	Probes        int
	ProbeInterval time.Duration
	// IdleWindow is how long idle CPU and writes are measured, IdleDelay
	// after the target settled: the last write is not the end of the work
	// it causes (its own watch events come back to be reconciled).
	IdleWindow, IdleDelay time.Duration
	// ProfileIdle saves a CPU profile of the target over the idle window,
	// and a heap profile after it, into the run's directory.
	ProfileIdle bool
	// The target has settled after SettleQuiet without a write; the wait
	// gives up after SettleCap.
	SettleQuiet, SettleCap time.Duration
	// CreateParallel clients create the backlog.
	CreateParallel int
}

// DefaultSweepParams are what `make bench-full` uses.
var DefaultSweepParams = SweepParams{
	Probes: 60, ProbeInterval: 200 * time.Millisecond, IdleWindow: 30 * time.Second,
	SettleQuiet: 10 * time.Second, SettleCap: 10 * time.Minute, CreateParallel: 16,
}

// Sweep runs one target at one depth.
func Sweep(ctx context.Context, t Target, depth int, mode, dir string, p SweepParams) (*SweepResult, error) {
	qps, burst, err := clientLimits(mode)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	api, err := StartAPIServer(dir, t.CRDDir)
	if err != nil {
		return nil, err
	}
	defer api.Stop()
	if err := api.waitEstablished(ctx, t); err != nil {
		return nil, err
	}
	plan := Plan{Flavor: "default", Queues: []QueuePlan{
		{Name: "backlog", NominalQuota: resource.MustParse("10")},
		{Name: "probe", NominalQuota: resource.MustParse("10")},
	}}
	if err := createQueues(ctx, api, t, plan); err != nil {
		return nil, err
	}
	if err := warmUpWatchCache(ctx, api, t); err != nil {
		return nil, err
	}
	pprofAddr := ""
	if p.ProfileIdle {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		pprofAddr = fmt.Sprintf("127.0.0.1:%d", port)
	}
	proc, err := StartProcess(t, Launch{Dir: dir, Kubeconfig: api.TargetKubeconfig, QPS: qps, Burst: burst, Pprof: pprofAddr})
	if err != nil {
		return nil, err
	}
	defer func() { _, _ = proc.Stop() }()
	if err := waitQueuesActive(ctx, api, t, 2, proc.Exited()); err != nil {
		return nil, err
	}
	rec := NewRecorder()
	kubelet := NewKubelet(api.Dynamic, t, rec, ClassLabel+" in (blocker,probe)")
	kubelet.Hold("backlog/blocker")
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := kubelet.Start(watchCtx, 4); err != nil {
		return nil, err
	}
	res := &SweepResult{Target: t.Name, Mode: mode, Depth: depth}
	if err := fillBacklog(ctx, api, t, rec, depth, p.CreateParallel, res); err != nil {
		return nil, err
	}
	audit := &auditTail{path: api.AuditLog}
	if err := settle(ctx, audit, proc, p, res); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(p.IdleDelay):
	}
	if pprofAddr != "" {
		go func() {
			base := "http://" + pprofAddr + "/debug/pprof/"
			save(ctx, fmt.Sprintf("%sprofile?seconds=%d", base, int(p.IdleWindow.Seconds())), filepath.Join(dir, "idle-cpu.pprof"))
			save(ctx, base+"heap", filepath.Join(dir, "idle-heap.pprof"))
		}()
	}
	if err := measureIdle(ctx, audit, proc, p.IdleWindow, res); err != nil {
		return nil, err
	}
	if res.Probe, err = probe(ctx, api, t, rec, p); err != nil {
		return nil, err
	}
	stopWatch()
	usage, err := proc.Stop()
	res.MaxRSSMiB, res.MaxRSSOwn = usage.MaxRSSMiB, usage.MaxRSSOwn
	return res, err
}

// fillBacklog admits the blocker, which takes the backlog queue's whole
// quota, then creates depth workloads behind it as fast as the API allows.
func fillBacklog(ctx context.Context, api *APIServer, t Target, rec *Recorder, depth, parallel int, res *SweepResult) error {
	gvr := t.Resource("Workload")
	blocker := WorkloadTemplate{ClassName: "blocker", Request: resource.MustParse("10"), RuntimeMs: 1}
	rec.Created("backlog/blocker", "blocker", 10000, time.Now())
	if err := create(ctx, api, gvr, t.Workload("backlog", "blocker", "backlog", blocker)); err != nil {
		return err
	}
	if err := waitFor(ctx, 2*time.Minute, func() bool { n, _ := rec.Admitted("blocker"); return n == 1 }); err != nil {
		return errors.New("the blocker was never admitted")
	}
	start := time.Now()
	small := WorkloadTemplate{ClassName: "backlog", Request: resource.MustParse("1"), RuntimeMs: 1000}
	per := (depth + parallel - 1) / parallel
	err := forEach(parallel, parallel, func(w int) error {
		for i := w * per; i < min((w+1)*per, depth); i++ {
			if err := create(ctx, api, gvr, t.Workload("backlog", fmt.Sprintf("pending-%d", i), "backlog", small)); err != nil {
				return err
			}
		}
		return nil
	})
	res.CreateSeconds = time.Since(start).Seconds()
	return err
}

// settle waits until the target has made no API write for SettleQuiet.
func settle(ctx context.Context, audit *auditTail, proc *Process, p SweepParams, res *SweepResult) error {
	start, lastWrite := time.Now(), time.Now()
	for time.Since(start) < p.SettleCap {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-proc.Exited():
			return fmt.Errorf("the target exited:\n%s", proc.tailLog(20))
		case <-time.After(time.Second):
		}
		n, err := audit.newWrites()
		if err != nil {
			return err
		}
		res.SettleWrites += n
		if n > 0 {
			lastWrite = time.Now()
		}
		if time.Since(lastWrite) >= p.SettleQuiet {
			res.Settled = true
			break
		}
	}
	res.SettleSeconds = lastWrite.Sub(start).Seconds()
	return nil
}

// measureIdle samples the target's CPU and writes over a quiet window.
func measureIdle(ctx context.Context, audit *auditTail, proc *Process, window time.Duration, res *SweepResult) error {
	cpu0, err := proc.CPUSeconds()
	if err != nil {
		return err
	}
	if _, err := audit.newWrites(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(window):
	}
	cpu1, err := proc.CPUSeconds()
	if err != nil {
		return err
	}
	writes, err := audit.newWrites()
	res.IdleCPUCores = (cpu1 - cpu0) / window.Seconds()
	res.IdleWritesPerMinute = float64(writes) / window.Minutes()
	return err
}

// probe submits small workloads that fit into the probe queue, one every
// ProbeInterval, and waits for them to be admitted.
func probe(ctx context.Context, api *APIServer, t Target, rec *Recorder, p SweepParams) (Distribution, error) {
	gvr := t.Resource("Workload")
	wt := WorkloadTemplate{ClassName: "probe", Request: resource.MustParse("1"), RuntimeMs: 200}
	for i := range p.Probes {
		name := fmt.Sprintf("probe-%d", i)
		rec.Created("probe/"+name, "probe", 1000, time.Now())
		if err := create(ctx, api, gvr, t.Workload("probe", name, "probe", wt)); err != nil {
			return Distribution{}, err
		}
		time.Sleep(p.ProbeInterval)
	}
	if err := waitFor(ctx, 5*time.Minute, func() bool { n, _ := rec.Admitted("probe"); return n == p.Probes }); err != nil {
		n, _ := rec.Admitted("probe")
		return Distribution{}, fmt.Errorf("only %d of %d probes admitted", n, p.Probes)
	}
	return Summarize(rec.timesToAdmission("probe")), nil
}

func waitFor(ctx context.Context, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return nil
}

// auditTail counts the write requests appended to the audit log since the
// last call.
type auditTail struct {
	path   string
	offset int64
}

func (a *auditTail) newWrites() (int, error) {
	f, err := os.Open(a.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < a.offset {
		return 0, fmt.Errorf("audit log %s shrank below what was read (rotated?): write counts would be wrong", a.path)
	}
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return 0, err
	}
	n := 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial last line is read next time
		}
		a.offset += int64(len(line))
		var ev auditEvent
		if json.Unmarshal(line, &ev) == nil && isWrite(ev.Verb) {
			n++
		}
	}
	return n, nil
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// SweepAndReport runs every target at every depth and writes sweep.{json,md}.
func SweepAndReport(ctx context.Context, targets []Target, depths []int, mode, out string, p SweepParams, log io.Writer) error {
	var results []*SweepResult
	for _, depth := range depths {
		for _, t := range targets {
			began := time.Now()
			r, err := Sweep(ctx, t, depth, mode, filepath.Join(out, "runs", fmt.Sprintf("sweep-%s-%d", t.Name, depth)), p)
			if err != nil {
				return fmt.Errorf("%s at depth %d: %w", t.Name, depth, err)
			}
			fmt.Fprintf(log, "%-6s depth %6d: settled %v after %.0f s (%d writes), idle %.3f cores %.1f writes/min, probe p50 %.0f ms p99 %.0f ms (took %s)\n",
				t.Name, depth, r.Settled, r.SettleSeconds, r.SettleWrites, r.IdleCPUCores, r.IdleWritesPerMinute, r.Probe.P50, r.Probe.P99, time.Since(began).Round(time.Second))
			results = append(results, r)
			data, err := json.MarshalIndent(results, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(out, "sweep.json"), data, 0o644); err != nil {
				return err
			}
		}
	}
	md := SweepMarkdown(results, p)
	fmt.Fprint(log, md)
	return os.WriteFile(filepath.Join(out, "sweep.md"), []byte(md), 0o644)
}

// SweepMarkdown renders the sweep table.
func SweepMarkdown(rs []*SweepResult, p SweepParams) string {
	var b strings.Builder
	b.WriteString("| pending | system | backlog created in | target settled after (writes) | idle CPU (cores) | idle writes/min | probe p50 | probe p99 | max RSS |\n")
	b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		settled := fmt.Sprintf("%.0f s (%d)", r.SettleSeconds, r.SettleWrites)
		if !r.Settled {
			settled = fmt.Sprintf("not in %s (%d)", p.SettleCap, r.SettleWrites)
		}
		fmt.Fprintf(&b, "| %d | %s | %.0f s | %s | %.3f | %.1f | %.0f ms | %.0f ms | %.0f MiB |\n",
			r.Depth, r.Target, r.CreateSeconds, settled, r.IdleCPUCores, r.IdleWritesPerMinute, r.Probe.P50, r.Probe.P99, r.MaxRSSMiB)
	}
	return b.String()
}
