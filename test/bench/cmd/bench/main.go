// Command bench runs Muster and Kueue side by side on Kueue's scheduler
// performance mix and writes JSON results, a markdown table and a plot.
//
//	bench run       -config quick.yaml -targets muster,kueue -modes parity,kueue-defaults -reps 1 -out DIR
//	bench calibrate -out DIR
//	bench sweep     -depths 1000,10000 -targets muster,kueue -out DIR
//	bench report    -config baseline.yaml -out DIR   (tables and plot again from DIR/results.json)
//	bench multicluster -workers 10 -workloads 10000 -modes unthrottled -out DIR
//	bench full      -suites baseline,large-scale,tas,sweep -modes parity,unthrottled -reps 3 -out DIR [-doc docs/performance.md]
//
// It needs KUBEBUILDER_ASSETS (etcd, kube-apiserver) and the binaries from
// `make bench-bins`; `make bench` and `make bench-full` set everything up.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/musterhq/muster/test/bench/harness"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench run|calibrate|sweep|report|multicluster|full [flags]")
		os.Exit(2)
	}
	// envtest logs through controller-runtime; the harness reports itself.
	ctrllog.SetLogger(logr.Discard())
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(ctx, os.Args[2:])
	case "calibrate":
		err = calibrateCmd(ctx, os.Args[2:])
	case "sweep":
		err = sweepCmd(ctx, os.Args[2:])
	case "report":
		err = reportCmd(os.Args[2:])
	case "multicluster":
		err = multiClusterCmd(ctx, os.Args[2:])
	case "full":
		err = fullCmd(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type common struct {
	out, targets, musterBin, musterCRDs, kueueBin, kueueCRDs string
}

func (c *common) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "bin/bench/results", "Directory for results and run artifacts.")
	fs.StringVar(&c.targets, "targets", "muster,kueue", "Systems to run, in order.")
	fs.StringVar(&c.musterBin, "muster-bin", "bin/muster", "Muster manager binary.")
	fs.StringVar(&c.musterCRDs, "muster-crds", "config/crd/bases", "Muster CRDs.")
	fs.StringVar(&c.kueueBin, "kueue-bin", "bin/bench/kueue-bench", "Kueue scheduler binary (test/bench/kueue).")
	fs.StringVar(&c.kueueCRDs, "kueue-crds", "bin/bench/kueue-crds", "Kueue CRDs.")
}

func (c *common) targetList() ([]harness.Target, error) {
	var ts []harness.Target
	for _, name := range strings.Split(c.targets, ",") {
		switch strings.TrimSpace(name) {
		case "muster":
			ts = append(ts, harness.Muster(c.musterBin, c.musterCRDs))
		case "kueue":
			ts = append(ts, harness.Kueue(c.kueueBin, c.kueueCRDs))
		default:
			return nil, fmt.Errorf("unknown target %q", name)
		}
	}
	return ts, nil
}

func runCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	var c common
	c.bind(fs)
	config := fs.String("config", "test/bench/configs/quick.yaml", "Generator config (Kueue's schema).")
	modes := fs.String("modes", "parity,kueue-defaults,unthrottled", "Modes to run: parity (both at QPS 50, burst 100), kueue-defaults (both at Kueue's defaults, QPS 300, burst 500), unthrottled.")
	reps := fs.Int("reps", 1, "Repetitions of each target and mode.")
	prof := fs.Duration("profile", 0, "Take a CPU profile of each target over this long, 10 s into each run, and a heap profile at its end (runs/*/{cpu,heap}.pprof).")
	timeline := fs.Bool("timeline", false, "Add each run minute by minute to the report (for mixes whose arrivals are spread over the run).")
	runTimeout := fs.Duration("run-timeout", 30*time.Minute, "Stop a run that has not finished by then.")
	_ = fs.Parse(args)
	targets, err := c.targetList()
	if err != nil {
		return err
	}
	cfg, err := harness.LoadConfig(*config)
	if err != nil {
		return err
	}
	// `bench calibrate` into the same directory first adds the ceiling.
	cal, err := harness.LoadCalibration(c.out)
	if err != nil {
		return err
	}
	return harness.Compare(ctx, harness.CompareSpec{
		Config: cfg, ConfigName: filepath.Base(*config), Targets: targets,
		Modes: strings.Split(*modes, ","), Reps: *reps, Out: c.out, Log: os.Stdout, Calibration: cal, Profile: *prof,
		Timeline: *timeline, RunTimeout: *runTimeout,
	})
}

func calibrateCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("calibrate", flag.ExitOnError)
	var c common
	c.bind(fs)
	seconds := fs.Float64("seconds", 5, "Duration of each measurement.")
	_ = fs.Parse(args)
	return harness.CalibrateAndReport(ctx, c.musterCRDs, c.out, *seconds, os.Stdout)
}

func sweepCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sweep", flag.ExitOnError)
	var c common
	c.bind(fs)
	depths := fs.String("depths", "1000,10000,100000", "Pending depths.")
	mode := fs.String("mode", harness.Unthrottled, "Client limits mode.")
	idleDelay := fs.Duration("idle-delay", 0, "How long after the target settled (no write for 10 s) its idle CPU is measured.")
	profileIdle := fs.Bool("profile-idle", false, "Save CPU and heap profiles of the target over its idle window (runs/*/idle-{cpu,heap}.pprof).")
	_ = fs.Parse(args)
	targets, err := c.targetList()
	if err != nil {
		return err
	}
	ds, err := parseDepths(*depths)
	if err != nil {
		return err
	}
	params := harness.DefaultSweepParams
	params.IdleDelay, params.ProfileIdle = *idleDelay, *profileIdle
	return harness.SweepAndReport(ctx, targets, ds, *mode, c.out, params, os.Stdout)
}

func reportCmd(args []string) error {
	fs := flag.NewFlagSet("report", flag.ExitOnError)
	out := fs.String("out", "bin/bench/results", "Directory holding results.json (and calibration.json).")
	config := fs.String("config", "test/bench/configs/quick.yaml", "Generator config the results came from.")
	timeline := fs.Bool("timeline", false, "Add each run minute by minute.")
	_ = fs.Parse(args)
	cfg, err := harness.LoadConfig(*config)
	if err != nil {
		return err
	}
	return harness.Report(*out, cfg, filepath.Base(*config), *timeline, os.Stdout)
}

func fullCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("full", flag.ExitOnError)
	var c common
	c.bind(fs)
	suites := fs.String("suites", "baseline,large-scale,tas,sweep", "Suites, in order: baseline, large-scale, tas, sweep, or name=config.yaml.")
	modes := fs.String("modes", "parity,unthrottled", "Modes to run.")
	reps := fs.Int("reps", 3, "Repetitions of each target, suite and mode.")
	depths := fs.String("sweep-depths", "10000", "Pending depths of the sweep suite.")
	seconds := fs.Float64("calibration-seconds", 10, "Duration of each calibration measurement.")
	doc := fs.String("doc", "", "A document whose generated acceptance table is replaced with the report's.")
	runTimeout := fs.Duration("run-timeout", 90*time.Minute, "Stop a run that has not finished by then (Kueue's 50k large-scale run at parity takes over 30 minutes here).")
	startFor := fs.Duration("start-runs-for", 0, "Start no run after this long (0: no limit); the invocation then calibrates, reports and stops, and the next resumes.")
	_ = fs.Parse(args)
	targets, err := c.targetList()
	if err != nil {
		return err
	}
	var startBy time.Time
	if *startFor > 0 {
		startBy = time.Now().Add(*startFor)
	}
	ds, err := parseDepths(*depths)
	if err != nil {
		return err
	}
	var ss []harness.Suite
	for _, name := range strings.Split(*suites, ",") {
		s, err := suiteNamed(strings.TrimSpace(name), ds)
		if err != nil {
			return err
		}
		ss = append(ss, s)
	}
	spec := harness.FullSpec{Suites: ss, Targets: targets, Modes: strings.Split(*modes, ","), Reps: *reps, Out: c.out,
		Log: os.Stdout, MusterCRDs: c.musterCRDs, CalibrationSeconds: *seconds, RunTimeout: *runTimeout,
		StartBy: startBy}
	if err := harness.Full(ctx, spec); err != nil {
		return err
	}
	if *doc == "" {
		return nil
	}
	left, err := harness.RunsLeft(spec)
	if err != nil {
		return err
	}
	if left > 0 {
		// The table is of a complete comparison: one of part of it would
		// read as the result.
		fmt.Printf("%d runs left: %s's table is written when none are\n", left, *doc)
		return nil
	}
	report, err := harness.FullReport(c.out, ss)
	if err != nil {
		return err
	}
	cmd := "bench full " + strings.Join(withoutFlag(args, "start-runs-for"), " ")
	return harness.UpdateDoc(*doc, "```sh\n"+cmd+"\n```\n\n"+report)
}

// suiteNamed is a default suite by name, or name=config for another mix.
func suiteNamed(name string, depths []int) (harness.Suite, error) {
	if n, config, ok := strings.Cut(name, "="); ok {
		return harness.Suite{Name: n, Config: config}, nil
	}
	for _, s := range harness.DefaultSuites {
		if s.Name == name {
			if s.Depths != nil {
				s.Depths = depths
			}
			return s, nil
		}
	}
	return harness.Suite{}, fmt.Errorf("unknown suite %q", name)
}

func parseDepths(list string) ([]int, error) {
	var ds []int
	for _, d := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil {
			return nil, err
		}
		ds = append(ds, n)
	}
	return ds, nil
}

// withoutFlag drops a flag and its value from args (-name v, -name=v,
// --name v): the command recorded with a result is the comparison's,
// not one session's share of it.
func withoutFlag(args []string, name string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := strings.TrimLeft(args[i], "-")
		switch {
		case a == name && strings.HasPrefix(args[i], "-"):
			i++ // its value
		case strings.HasPrefix(a, name+"=") && strings.HasPrefix(args[i], "-"):
		default:
			out = append(out, args[i])
		}
	}
	return out
}
