package sim

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTraceRoundTrips: what WriteTrace writes, ReadTrace reads back
// unchanged, for every scenario's trace (whole seconds, bounds and
// priorities included).
func TestTraceRoundTrips(t *testing.T) {
	for _, s := range Scenarios() {
		jobs := s.Generate(s.Seed)
		var buf bytes.Buffer
		if err := WriteTrace(&buf, jobs); err != nil {
			t.Fatal(err)
		}
		back, err := ReadTrace(&buf)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if !reflect.DeepEqual(back, jobs) {
			t.Errorf("%s: %d jobs written, %d read back, or they differ", s.Name, len(jobs), len(back))
		}
	}
}

// TestCommittedTracesMatchTheirSeeds: the CSVs in traces/ are what the
// generators make from the seeds the README names; after changing a
// generator, regenerate them (muster-sim -generate).
func TestCommittedTracesMatchTheirSeeds(t *testing.T) {
	for _, s := range Scenarios() {
		got, err := ReadTraceFile(filepath.Join("traces", s.Trace))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, s.Generate(s.Seed)) {
			t.Errorf("traces/%s is not what seed %d generates: cd test/tools && go run ./cmd/muster-sim -generate -traces ../sim/traces", s.Trace, s.Seed)
		}
	}
}

// TestReadTraceOrdersByArrival: rows may come in any order; jobs arriving
// together keep the file's order, which is the order they are submitted.
func TestReadTraceOrdersByArrival(t *testing.T) {
	csv := strings.Join(traceHeader, ",") + "\n" +
		"60,a,1,10,0,0\n" +
		"0,b,2,10,0,0\n" +
		"60,c,1,10,0,0\n"
	jobs, err := ReadTrace(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, j := range jobs {
		order = append(order, j.Queue)
	}
	if got := strings.Join(order, ""); got != "bac" {
		t.Errorf("order %q, want bac", got)
	}
	if jobs[0].Arrival != 0 || jobs[1].Arrival != time.Minute {
		t.Errorf("arrivals %s, %s", jobs[0].Arrival, jobs[1].Arrival)
	}
}

// TestReadTraceRejectsBadRows: a trace the engine could not replay
// faithfully (a job outliving its declared bound, which the simulator
// promises never happens; no GPUs; a wrong header) is refused with the
// line it is on.
func TestReadTraceRejectsBadRows(t *testing.T) {
	header := strings.Join(traceHeader, ",") + "\n"
	for name, csv := range map[string]string{
		"runtime beyond bound": header + "0,a,1,600,0,300\n",
		"no gpus":              header + "0,a,0,600,0,0\n",
		"no queue":             header + "0,,1,600,0,0\n",
		"not a number":         header + "0,a,one,600,0,0\n",
		"wrong header":         "arrival,queue,gpus,runtime,priority,bound\n0,a,1,600,0,0\n",
	} {
		if _, err := ReadTrace(strings.NewReader(csv)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
