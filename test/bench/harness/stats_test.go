package harness

import (
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	var s []float64
	for i := 100; i >= 1; i-- {
		s = append(s, float64(i))
	}
	got := Summarize(s)
	want := Distribution{Count: 100, Mean: 50.5, P50: 50, P90: 90, P99: 99, Max: 100}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if (Summarize(nil) != Distribution{}) {
		t.Fatal("empty samples summarise to zero")
	}
	if one := Summarize([]float64{7}); one.P50 != 7 || one.P99 != 7 || one.Max != 7 {
		t.Fatalf("one sample: %+v", one)
	}
}

func TestPeakRate(t *testing.T) {
	base := time.Unix(0, 0)
	var ts []time.Time
	for i := range 10 { // 10 events in the first second
		ts = append(ts, base.Add(time.Duration(i)*100*time.Millisecond))
	}
	ts = append(ts, base.Add(20*time.Second), base.Add(21*time.Second))
	if got := peakRate(ts, 5*time.Second); got != 2 {
		t.Fatalf("peak over 5 s windows: got %v/s, want 2/s", got)
	}
}

func TestSpreadOf(t *testing.T) {
	if got := SpreadOf([]float64{10, 14, 12}); got.Mean != 12 || got.Half != 2 || got.N != 3 {
		t.Fatalf("got %+v", got)
	}
}

func TestTableShowsRatiosPerMode(t *testing.T) {
	mk := func(target string, aps float64) *Result {
		return &Result{Target: target, Mode: Parity, AdmissionsPerSecond: aps,
			TimeToAdmission: map[string]Distribution{"small": {P99: aps}}, RequestsPerWorkload: map[string]float64{"patch": 1}}
	}
	table := Table([]*Result{mk("muster", 90), mk("kueue", 30), mk("muster", 110), mk("kueue", 30)}, []string{"small"})
	for _, want := range []string{"**parity** (mean ± half range of 2 runs each)", "| admissions/s (overall) | 100.0 ± 10.0 | 30.0 ± 0.0 | 3.33 |", "patch 1.00"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, Unthrottled) {
		t.Error("a mode without results gets no table")
	}
}

func TestModesInReportOrder(t *testing.T) {
	var rs []*Result
	for _, mode := range []string{Unthrottled, KueueDefaults, Parity} {
		for _, target := range []string{"kueue", "muster"} {
			rs = append(rs, &Result{Target: target, Mode: mode})
		}
	}
	var got []string
	for _, g := range Groups(rs) {
		got = append(got, g.Target+"/"+g.Mode)
	}
	want := "muster/parity kueue/parity muster/kueue-defaults kueue/kueue-defaults muster/unthrottled kueue/unthrottled"
	if strings.Join(got, " ") != want {
		t.Fatalf("groups %v, want %s", got, want)
	}
	for _, mode := range Modes {
		for _, target := range []string{"muster", "kueue"} {
			if _, ok := seriesColors[target+"/"+mode]; !ok {
				t.Errorf("no plot colour for %s/%s", target, mode)
			}
		}
		if _, _, err := clientLimits(mode); err != nil {
			t.Error(err)
		}
	}
	if qps, burst, _ := clientLimits(KueueDefaults); qps != 300 || burst != 500 {
		t.Errorf("kueue-defaults: QPS %v, burst %d, want Kueue v0.19's 300 and 500", qps, burst)
	}
}

func TestCeilingTable(t *testing.T) {
	cal := &Calibration{CreatesPerSecond: 400, PatchesPerSecond: 200, LifecyclesPerSecond: 80}
	table := CeilingTable([]*Result{{Target: "muster", Mode: Unthrottled, AdmissionsPerSecond: 64, PeakAdmissionsPerSecond: 80}}, cal)
	if !strings.Contains(table, "| unthrottled | muster | 64.0 | 80% | 100% |") {
		t.Fatalf("table:\n%s", table)
	}
}
