package harness

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// APIServerLoad is what the API server's own /metrics say about a run,
// every client together: how many requests it served, how long they took
// and how many it held at once. Set beside the calibration it says how
// close to its ceiling the API server ran. Both the target and the harness
// are system:masters, which API Priority and Fairness exempts: no request
// waits for a seat, so the ceiling is the machine's CPU, not APF's queues.
type APIServerLoad struct {
	// MutatingPerSecond and ReadsPerSecond are requests over the run
	// (watches excluded); PeakMutatingPerSecond is the busiest sample
	// interval's rate.
	MutatingPerSecond     float64 `json:"mutatingPerSecond"`
	PeakMutatingPerSecond float64 `json:"peakMutatingPerSecond"`
	ReadsPerSecond        float64 `json:"readsPerSecond"`
	// Latencies (ms) from apiserver_request_duration_seconds over the run.
	MutatingP50 float64 `json:"mutatingP50Ms"`
	MutatingP99 float64 `json:"mutatingP99Ms"`
	ReadP99     float64 `json:"readP99Ms"`
	// PeakInflightMutating and PeakInflightReads are the highest
	// apiserver_current_inflight_requests sampled: the API server's
	// high-water mark of the second before each sample, so a lower bound of
	// the run's peak.
	PeakInflightMutating float64 `json:"peakInflightMutating"`
	PeakInflightReads    float64 `json:"peakInflightReads"`
	// TerminatedWatchers are the watches the API server closed because
	// their client fell behind (apiserver_terminated_watchers_total, every
	// resource): each one's client watches again, or lists everything again
	// if it fell out of the watch cache's window, and sees the changes it
	// missed only then, every client of the run alike (the systems' own
	// watches and the harness's kubelet). The API server's log in the run's
	// directory names them. Nil in a run recorded before it was counted.
	TerminatedWatchers *float64 `json:"terminatedWatchers,omitempty"`
	// WorkloadWatchCache is the capacity of the API server's Workload
	// watch cache at the run's start (watch_cache_capacity),
	// which sizes the buffer of each watch opened then (warmUpWatchCache);
	// 0 in a run recorded before it was read.
	WorkloadWatchCache float64 `json:"workloadWatchCache,omitempty"`
	Samples            int     `json:"samples"`
	// FailedScrapes are samples lost to an error; the run fails only if
	// fewer than two samples remain.
	FailedScrapes int `json:"failedScrapes,omitempty"`
}

// apiSample is one scrape's cumulative counts and current gauges.
type apiSample struct {
	at                      time.Time
	mutating, reads         float64
	mutatingHist, readHist  histogram
	inflightMut, inflightRO float64
	terminatedWatchers      float64
	workloadWatchCache      float64
}

// histogram is a cumulative histogram: upper bounds and counts.
type histogram struct {
	bounds []float64
	counts []float64
}

// apiSampler scrapes the API server's /metrics every interval until
// stopped.
type apiSampler struct {
	client   *http.Client
	url      string
	interval time.Duration

	stop context.CancelFunc
	done chan struct{}

	mu      sync.Mutex
	samples []apiSample
	failed  int
	lastErr error
}

func newAPISampler(cfg *rest.Config, interval time.Duration) (*apiSampler, error) {
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	return &apiSampler{client: client, url: strings.TrimSuffix(cfg.Host, "/") + "/metrics",
		interval: interval, done: make(chan struct{})}, nil
}

// Start samples once now, then every interval until Finish or ctx ends.
func (s *apiSampler) Start(ctx context.Context) error {
	if err := s.sample(ctx); err != nil {
		return err
	}
	ctx, s.stop = context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.record(ctx, s.sample(ctx))
			}
		}
	}()
	return nil
}

// record counts a failed scrape: one lost sample does not lose the run.
func (s *apiSampler) record(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed++
	s.lastErr = err
}

// Finish stops the sampling, takes a last sample and returns the run's
// load.
func (s *apiSampler) Finish(ctx context.Context) (*APIServerLoad, error) {
	s.stop()
	<-s.done
	s.record(ctx, s.sample(ctx))
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) < 2 {
		return nil, fmt.Errorf("%d samples of the API server's metrics: %w", len(s.samples), s.lastErr)
	}
	l := loadOf(s.samples, s.interval/2)
	l.FailedScrapes = s.failed
	return l, nil
}

func (s *apiSampler) sample(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return err
	}
	// Uncompressed: gzip would be more of the API server's CPU, which the
	// run measures.
	req.Header.Set("Accept-Encoding", "identity")
	at := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", s.url, resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	smp := sampleOf(fams)
	smp.at = at
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
	return nil
}

var mutatingVerbs = []string{"POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"}

// sampleOf reads one scrape.
func sampleOf(fams map[string]*dto.MetricFamily) apiSample {
	var s apiSample
	if f := fams["apiserver_request_total"]; f != nil {
		for _, m := range f.GetMetric() {
			switch kindOfVerb(labelValue(m, "verb")) {
			case "mutating":
				s.mutating += m.GetCounter().GetValue()
			case "read":
				s.reads += m.GetCounter().GetValue()
			}
		}
	}
	if f := fams["apiserver_request_duration_seconds"]; f != nil {
		for _, m := range f.GetMetric() {
			switch kindOfVerb(labelValue(m, "verb")) {
			case "mutating":
				s.mutatingHist.add(m.GetHistogram())
			case "read":
				s.readHist.add(m.GetHistogram())
			}
		}
	}
	if f := fams["apiserver_current_inflight_requests"]; f != nil {
		for _, m := range f.GetMetric() {
			if labelValue(m, "request_kind") == "mutating" {
				s.inflightMut += m.GetGauge().GetValue()
			} else {
				s.inflightRO += m.GetGauge().GetValue()
			}
		}
	}
	if f := fams["watch_cache_capacity"]; f != nil {
		for _, m := range f.GetMetric() {
			if labelValue(m, "resource") == "workloads" {
				s.workloadWatchCache = m.GetGauge().GetValue()
			}
		}
	}
	if f := fams["apiserver_terminated_watchers_total"]; f != nil {
		for _, m := range f.GetMetric() {
			s.terminatedWatchers += m.GetCounter().GetValue()
		}
	}
	return s
}

// kindOfVerb sorts a request verb: mutating, read, or "" for watches and
// connections, which last as long as the client wants.
func kindOfVerb(verb string) string {
	switch {
	case slices.Contains(mutatingVerbs, verb):
		return "mutating"
	case verb == "GET" || verb == "LIST":
		return "read"
	}
	return ""
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// add sums another cumulative histogram with the same buckets into h.
func (h *histogram) add(p *dto.Histogram) {
	if h.bounds == nil {
		for _, b := range p.GetBucket() {
			h.bounds = append(h.bounds, b.GetUpperBound())
		}
		h.counts = make([]float64, len(h.bounds))
	}
	for i, b := range p.GetBucket() {
		if i < len(h.counts) && b.GetUpperBound() == h.bounds[i] {
			h.counts[i] += float64(b.GetCumulativeCount())
		}
	}
}

// minus is the histogram of what was observed after o.
func (h histogram) minus(o histogram) histogram {
	d := histogram{bounds: h.bounds, counts: slices.Clone(h.counts)}
	for i := range d.counts {
		if i < len(o.counts) {
			d.counts[i] -= o.counts[i]
		}
	}
	return d
}

// quantile is q's upper bound interpolated linearly within its bucket, in
// ms (the API server's buckets run from 5 ms to 60 s).
func (h histogram) quantile(q float64) float64 {
	if len(h.counts) == 0 || h.counts[len(h.counts)-1] == 0 {
		return 0
	}
	rank := q * h.counts[len(h.counts)-1]
	lower, below := 0.0, 0.0
	for i, c := range h.counts {
		if c >= rank {
			if c == below || math.IsInf(h.bounds[i], 1) {
				return 1000 * lower
			}
			return 1000 * (lower + (h.bounds[i]-lower)*(rank-below)/(c-below))
		}
		lower, below = h.bounds[i], c
	}
	return 1000 * lower
}

// loadOf turns the samples of a run into its load; intervals shorter than
// minWindow (a sample right before the last) do not make the peak rate.
func loadOf(samples []apiSample, minWindow time.Duration) *APIServerLoad {
	l := &APIServerLoad{Samples: len(samples)}
	if len(samples) < 2 {
		return l
	}
	first, last := samples[0], samples[len(samples)-1]
	l.WorkloadWatchCache = first.workloadWatchCache
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return l
	}
	l.MutatingPerSecond = (last.mutating - first.mutating) / secs
	l.ReadsPerSecond = (last.reads - first.reads) / secs
	mut := last.mutatingHist.minus(first.mutatingHist)
	l.MutatingP50, l.MutatingP99 = mut.quantile(0.5), mut.quantile(0.99)
	l.ReadP99 = last.readHist.minus(first.readHist).quantile(0.99)
	terminated := last.terminatedWatchers - first.terminatedWatchers
	l.TerminatedWatchers = &terminated
	for i, s := range samples {
		l.PeakInflightMutating = max(l.PeakInflightMutating, s.inflightMut)
		l.PeakInflightReads = max(l.PeakInflightReads, s.inflightRO)
		if i > 0 {
			if d := s.at.Sub(samples[i-1].at); d >= minWindow && d > 0 {
				l.PeakMutatingPerSecond = max(l.PeakMutatingPerSecond, (s.mutating-samples[i-1].mutating)/d.Seconds())
			}
		}
	}
	return l
}
