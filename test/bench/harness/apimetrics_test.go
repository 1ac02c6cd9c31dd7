package harness

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape is a trimmed /metrics of a kube-apiserver: two verbs of each
// kind, a watch that must not count, in-flight gauges, APF queues and
// terminated watchers (as many as watches, for brevity) and the watch
// caches' capacities (the Workloads' 100 per watch).
func scrape(t *testing.T, posts, gets, watches, inflight, queued int, fast, slow int) apiSample {
	t.Helper()
	text := strings.NewReplacer(
		"POSTS", strconv.Itoa(posts), "GETS", strconv.Itoa(gets), "WATCHES", strconv.Itoa(watches),
		"INFLIGHT", strconv.Itoa(inflight), "QUEUED", strconv.Itoa(queued),
		"FAST", strconv.Itoa(fast), "ALL", strconv.Itoa(fast+slow), "CAPACITY", strconv.Itoa(100*watches),
	).Replace(`# TYPE apiserver_request_total counter
apiserver_request_total{verb="POST",resource="workloads",code="201"} POSTS
apiserver_request_total{verb="PATCH",resource="workloads",code="200"} 0
apiserver_request_total{verb="GET",resource="workloads",code="200"} GETS
apiserver_request_total{verb="WATCH",resource="workloads",code="200"} WATCHES
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{verb="POST",resource="workloads",le="0.005"} FAST
apiserver_request_duration_seconds_bucket{verb="POST",resource="workloads",le="0.1"} ALL
apiserver_request_duration_seconds_bucket{verb="POST",resource="workloads",le="+Inf"} ALL
apiserver_request_duration_seconds_sum{verb="POST",resource="workloads"} 1
apiserver_request_duration_seconds_count{verb="POST",resource="workloads"} ALL
apiserver_request_duration_seconds_bucket{verb="WATCH",resource="workloads",le="0.005"} 0
apiserver_request_duration_seconds_bucket{verb="WATCH",resource="workloads",le="0.1"} 0
apiserver_request_duration_seconds_bucket{verb="WATCH",resource="workloads",le="+Inf"} WATCHES
apiserver_request_duration_seconds_sum{verb="WATCH",resource="workloads"} 1000
apiserver_request_duration_seconds_count{verb="WATCH",resource="workloads"} WATCHES
# TYPE apiserver_current_inflight_requests gauge
apiserver_current_inflight_requests{request_kind="mutating"} INFLIGHT
apiserver_current_inflight_requests{request_kind="readOnly"} 1
# TYPE apiserver_terminated_watchers_total counter
apiserver_terminated_watchers_total{group="muster.dev",resource="workloads"} WATCHES
apiserver_terminated_watchers_total{group="",resource="pods"} 5
# TYPE watch_cache_capacity gauge
watch_cache_capacity{group="muster.dev",resource="workloads"} CAPACITY
watch_cache_capacity{group="",resource="pods"} 100
# TYPE apiserver_flowcontrol_current_inqueue_requests gauge
apiserver_flowcontrol_current_inqueue_requests{priority_level="workload-low",flow_schema="service-accounts"} QUEUED
`)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return sampleOf(fams)
}

func TestAPIServerLoadIsTheRunsDelta(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := scrape(t, 100, 50, 7, 3, 0, 100, 0)
	a.at = t0
	b := scrape(t, 600, 150, 9, 40, 12, 150, 450) // 500 posts in 5 s, 50 fast and 450 slow
	b.at = t0.Add(5 * time.Second)
	c := scrape(t, 700, 250, 9, 2, 0, 150, 550) // 100 posts in 5 s
	c.at = t0.Add(10 * time.Second)
	d := scrape(t, 720, 250, 9, 2, 0, 150, 570) // 20 posts in 0.1 s: too short a window for the peak
	d.at = c.at.Add(100 * time.Millisecond)
	l := loadOf([]apiSample{a, b, c, d}, 2500*time.Millisecond)

	if l.Samples != 4 || math.Abs(l.MutatingPerSecond-620/10.1) > 1e-9 || math.Abs(l.ReadsPerSecond-200/10.1) > 1e-9 || l.PeakMutatingPerSecond != 100 {
		t.Errorf("rates: %+v", l)
	}
	if l.PeakInflightMutating != 40 || l.PeakInflightReads != 1 {
		t.Errorf("peaks: %+v", l)
	}
	if l.TerminatedWatchers == nil || *l.TerminatedWatchers != 2 {
		t.Errorf("terminated watchers %v, want the run's 2 (9 - 7, every resource)", l.TerminatedWatchers)
	}
	if l.WorkloadWatchCache != 700 {
		t.Errorf("Workload watch cache %v, want the first sample's 700 (the one the run's watches were opened with)", l.WorkloadWatchCache)
	}
	// 620 posts in the run: 50 under 5 ms, 570 between 5 and 100 ms. The
	// watches' hour-long durations must not count.
	if want := 5 + 95*(310.0-50)/570; math.Abs(l.MutatingP50-want) > 1e-9 {
		t.Errorf("p50 %.3f ms, want %.3f", l.MutatingP50, want)
	}
	if want := 5 + 95*(0.99*620-50)/570; math.Abs(l.MutatingP99-want) > 1e-9 {
		t.Errorf("p99 %.3f ms, want %.3f", l.MutatingP99, want)
	}
}

func TestAPIServerLoadOfTooFewSamples(t *testing.T) {
	if l := loadOf([]apiSample{scrape(t, 1, 1, 1, 1, 0, 1, 0)}, 0); l.Samples != 1 || l.MutatingPerSecond != 0 {
		t.Errorf("one sample: %+v", l)
	}
	if q := (histogram{}).quantile(0.99); q != 0 {
		t.Errorf("empty histogram p99 %v", q)
	}
}
