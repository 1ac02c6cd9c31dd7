package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musterhq/muster/test/bench/harness"
)

// multiClusterCmd runs the multi-cluster dispatch benchmark: one manager
// and -workers worker API servers, -workloads Jobs through the manager.
func multiClusterCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("multicluster", flag.ExitOnError)
	var c common
	c.bind(fs)
	workers := fs.Int("workers", 10, "Worker clusters (envtest API servers).")
	workloads := fs.Int("workloads", 10000, "Jobs submitted to the manager.")
	slots := fs.Int("slots", 200, "Workloads each worker runs at once (its quota).")
	interval := fs.Duration("interval", 5*time.Millisecond, "Time between two job creations.")
	runtime := fs.Int("runtime-ms", 1000, "How long each job runs in its worker.")
	modes := fs.String("modes", "unthrottled", "Client limits of the target (parity, kueue-defaults, unthrottled).")
	dispatchers := fs.String("dispatchers", "AllAtOnce", "Dispatchers to run (AllAtOnce, Incremental).")
	timeout := fs.Duration("timeout", time.Hour, "Bound of each run.")
	_ = fs.Parse(args)
	targets, err := c.targetList()
	if err != nil {
		return err
	}
	for _, t := range targets {
		for _, run := range runsOf(t.Name, *modes, *dispatchers) {
			mode, d := run[0], run[1]
			dir := filepath.Join(c.out, fmt.Sprintf("%s-%s-%s", t.Name, mode, d))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			res, err := harness.RunMultiCluster(ctx, harness.MultiClusterSpec{
				Target: t, Mode: mode, Workers: *workers, WorkerSlots: *slots, Workloads: *workloads,
				Interval: *interval, RuntimeMs: *runtime, Dispatcher: d, Dir: dir, Timeout: *timeout,
			}, os.Stdout)
			if err != nil {
				return err
			}
			if err := harness.SaveMultiCluster(dir, res); err != nil {
				return err
			}
			fmt.Printf("  %d/%d finished in %.1f s; dispatch p50 %.0f ms, p99 %.0f ms; writes per workload: manager %.2f, workers %.2f; target CPU %.1f s, RSS %.0f MiB; per worker %v\n",
				res.Finished, res.Workloads, res.WallSeconds, res.Dispatch.P50, res.Dispatch.P99,
				res.ManagerWritesPerWorkload, res.WorkerWritesPerWorkload, res.Usage.CPUSeconds, res.Usage.MaxRSSMiB, res.PerWorker)
		}
	}
	return nil
}

// runsOf are the mode and dispatcher pairs a target runs: Kueue only
// AllAtOnce (its benchmark binary does not run the incremental
// dispatcher's controller).
func runsOf(target, modes, dispatchers string) [][2]string {
	var out [][2]string
	for _, m := range strings.Split(modes, ",") {
		for _, d := range strings.Split(dispatchers, ",") {
			if target == "kueue" && d != "AllAtOnce" {
				continue
			}
			out = append(out, [2]string{m, d})
		}
	}
	return out
}
