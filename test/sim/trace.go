package sim

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// traceHeader is the trace CSV's header: one row per job.
//
//	arrival_s               seconds from the trace's start until the job is submitted
//	queue                   the LocalQueue (= ClusterQueue) it is submitted to
//	gpus                    GPUs it asks: that many pods of 1 GPU each, admitted together
//	runtime_s               seconds it runs once admitted (from the start again after a preemption)
//	priority                its priority (higher first, and may preempt lower)
//	declared_max_runtime_s  the runtime bound it declares (Workload.MaxRuntime); 0: unbounded
var traceHeader = []string{"arrival_s", "queue", "gpus", "runtime_s", "priority", "declared_max_runtime_s"}

// Job is one row of a trace.
type Job struct {
	Arrival  time.Duration
	Queue    string
	GPUs     int
	Runtime  time.Duration
	Priority int32
	// DeclaredMax is the declared runtime bound; zero is unbounded. A job
	// that declares one always finishes within it (Runtime <= DeclaredMax).
	DeclaredMax time.Duration
}

// WriteTrace writes jobs as a trace CSV, in whole seconds.
func WriteTrace(w io.Writer, jobs []Job) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(traceHeader); err != nil {
		return err
	}
	for _, j := range jobs {
		row := []string{secs(j.Arrival), j.Queue, strconv.Itoa(j.GPUs), secs(j.Runtime),
			strconv.Itoa(int(j.Priority)), secs(j.DeclaredMax)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// ReadTrace reads a trace CSV. The jobs come back ordered by arrival (rows
// arriving together keep their order in the file), which is the order the
// engine submits them in.
func ReadTrace(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(traceHeader)
	cr.Comment = '#'
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("trace header: %w", err)
	}
	if strings.Join(header, ",") != strings.Join(traceHeader, ",") {
		return nil, fmt.Errorf("trace header %q, want %q", strings.Join(header, ","), strings.Join(traceHeader, ","))
	}
	var jobs []Job
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		j, err := parseJob(row)
		if err != nil {
			line, _ := cr.FieldPos(0)
			return nil, fmt.Errorf("trace line %d: %w", line, err)
		}
		jobs = append(jobs, j)
	}
	sortJobs(jobs)
	return jobs, nil
}

// ReadTraceFile reads the trace CSV at path.
func ReadTraceFile(path string) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	jobs, err := ReadTrace(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return jobs, nil
}

// WriteTraceFile writes jobs as a trace CSV at path.
func WriteTraceFile(path string, jobs []Job) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteTrace(f, jobs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func parseJob(row []string) (Job, error) {
	var ints [5]int64
	for i, col := range []int{0, 2, 3, 4, 5} {
		v, err := strconv.ParseInt(strings.TrimSpace(row[col]), 10, 64)
		if err != nil {
			return Job{}, fmt.Errorf("%s: %w", traceHeader[col], err)
		}
		ints[i] = v
	}
	j := Job{Arrival: seconds(ints[0]), Queue: strings.TrimSpace(row[1]), GPUs: int(ints[1]),
		Runtime: seconds(ints[2]), Priority: int32(ints[3]), DeclaredMax: seconds(ints[4])}
	switch {
	case j.Queue == "":
		return Job{}, fmt.Errorf("no queue")
	case j.Arrival < 0 || j.GPUs <= 0 || j.Runtime <= 0 || j.DeclaredMax < 0:
		return Job{}, fmt.Errorf("arrival %s, gpus %d, runtime %s, bound %s: want arrival >= 0, gpus and runtime > 0, bound >= 0",
			j.Arrival, j.GPUs, j.Runtime, j.DeclaredMax)
	case j.DeclaredMax > 0 && j.Runtime > j.DeclaredMax:
		return Job{}, fmt.Errorf("runtime %s beyond its declared bound %s", j.Runtime, j.DeclaredMax)
	}
	return j, nil
}

// sortJobs orders jobs by arrival, keeping the order of ties.
func sortJobs(jobs []Job) {
	slices.SortStableFunc(jobs, func(a, b Job) int { return cmp.Compare(a.Arrival, b.Arrival) })
}

func secs(d time.Duration) string { return strconv.FormatInt(int64(d/time.Second), 10) }

func seconds(n int64) time.Duration { return time.Duration(n) * time.Second }
