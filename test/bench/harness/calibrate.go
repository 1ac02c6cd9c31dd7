package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Calibration is the API server's sustained Workload write rate on this
// machine, by client concurrency: the ceiling any controller runs into.
type Calibration struct {
	Levels []CalibrationLevel `json:"levels"`
	// CreatesPerSecond and PatchesPerSecond are the best levels.
	CreatesPerSecond float64 `json:"createsPerSecond"`
	PatchesPerSecond float64 `json:"patchesPerSecond"`
	// LifecyclesPerSecond is the workload lifecycles the API server could
	// carry if each cost only what it must: the workload's create, one
	// admission status write and one finish status write.
	LifecyclesPerSecond float64 `json:"lifecyclesPerSecond"`
}

// CalibrationLevel is one concurrency.
type CalibrationLevel struct {
	Concurrency      int     `json:"concurrency"`
	CreatesPerSecond float64 `json:"createsPerSecond"`
	PatchesPerSecond float64 `json:"patchesPerSecond"`
}

// CalibrationConcurrency are the client concurrencies measured.
var CalibrationConcurrency = []int{1, 8, 32, 128}

// Calibrate measures, at each concurrency, unthrottled creates of small
// Workloads and status merge-patches (a condition whose message changes,
// so each is a real write) for the given duration.
func Calibrate(ctx context.Context, crdDir, dir string, d time.Duration) (*Calibration, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	api, err := StartAPIServer(dir, crdDir)
	if err != nil {
		return nil, err
	}
	defer api.Stop()
	t := Muster("", crdDir)
	if err := api.waitEstablished(ctx, t); err != nil {
		return nil, err
	}
	ns := "calibration"
	if err := createNamespace(ctx, api, ns); err != nil {
		return nil, err
	}
	wls := api.Dynamic.Resource(t.Resource("Workload")).Namespace(ns)
	cal := &Calibration{}
	for _, c := range CalibrationConcurrency {
		level := CalibrationLevel{Concurrency: c}
		names := make([][]string, c)
		level.CreatesPerSecond = hammer(ctx, c, d, func(worker, i int) error {
			name := fmt.Sprintf("c%d-w%d-%d", c, worker, i)
			_, err := wls.Create(ctx, t.Workload(ns, name, "q", WorkloadTemplate{ClassName: "calibration", Request: resource.MustParse("1")}), metav1.CreateOptions{})
			if err == nil {
				names[worker] = append(names[worker], name)
			}
			return err
		})
		level.PatchesPerSecond = hammer(ctx, c, d, func(worker, i int) error {
			own := names[worker]
			if len(own) == 0 {
				return fmt.Errorf("no workload to patch")
			}
			return patchCondition(ctx, wls, own[i%len(own)], i)
		})
		cal.Levels = append(cal.Levels, level)
		cal.CreatesPerSecond = max(cal.CreatesPerSecond, level.CreatesPerSecond)
		cal.PatchesPerSecond = max(cal.PatchesPerSecond, level.PatchesPerSecond)
	}
	if cal.CreatesPerSecond > 0 && cal.PatchesPerSecond > 0 {
		cal.LifecyclesPerSecond = 1 / (1/cal.CreatesPerSecond + 2/cal.PatchesPerSecond)
	}
	return cal, nil
}

// hammer runs op on c workers for d and returns the successful ops per second.
func hammer(ctx context.Context, c int, d time.Duration, op func(worker, i int) error) float64 {
	var ok atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				if op(w, i) == nil {
					ok.Add(1)
				}
			}
		}()
	}
	start := time.Now()
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds()
}

func patchCondition(ctx context.Context, wls dynamic.ResourceInterface, name string, i int) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []metav1.Condition{{
		Type: "QuotaReserved", Status: metav1.ConditionFalse, Reason: "Pending",
		Message: fmt.Sprintf("calibration write %d", i), LastTransitionTime: metav1.Now(),
	}}}})
	if err != nil {
		return err
	}
	_, err = wls.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// CalibrateAndReport runs Calibrate and writes calibration.{json,md}.
func CalibrateAndReport(ctx context.Context, crdDir, out string, seconds float64, log io.Writer) error {
	cal, err := Calibrate(ctx, crdDir, filepath.Join(out, "runs", "calibration"), time.Duration(seconds*float64(time.Second)))
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(cal, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "calibration.json"), data, 0o644); err != nil {
		return err
	}
	md := cal.Markdown()
	fmt.Fprint(log, md)
	return os.WriteFile(filepath.Join(out, "calibration.md"), []byte(md), 0o644)
}

// Markdown renders the calibration table.
func (c *Calibration) Markdown() string {
	s := "| client concurrency | Workload creates/s | Workload status patches/s |\n|---:|---:|---:|\n"
	for _, l := range c.Levels {
		s += fmt.Sprintf("| %d | %.0f | %.0f |\n", l.Concurrency, l.CreatesPerSecond, l.PatchesPerSecond)
	}
	return s + fmt.Sprintf("\nCeiling: %.0f creates/s, %.0f status patches/s; %.1f workload lifecycles/s (1 create + 2 status writes each).\n",
		c.CreatesPerSecond, c.PatchesPerSecond, c.LifecyclesPerSecond)
}

func createNamespace(ctx context.Context, api *APIServer, name string) error {
	ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}
	return create(ctx, api, namespaces, unstructuredOf(ns))
}
