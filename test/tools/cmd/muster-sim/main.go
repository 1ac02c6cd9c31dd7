// Command muster-sim replays the fairness simulation's traces on Muster's
// scheduling core with a virtual clock (test/sim) and writes its plots and
// a markdown summary of the numbers.
//
//	muster-sim -out docs/images                 plots and sim-summary.md from test/sim/traces
//	muster-sim -generate -traces test/sim/traces  first rewrite the traces from their seeds
//
// make sim runs it from the repository's root (it lives in the test/tools
// module, with the plotting library, so the operator's go.mod has none).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/musterhq/muster/test/sim"
	"github.com/musterhq/muster/test/tools/simplot"
)

func main() {
	out := flag.String("out", "docs/images", "directory for the PNG plots and sim-summary.md")
	traces := flag.String("traces", "test/sim/traces", "directory of the trace CSVs")
	generate := flag.Bool("generate", false, "rewrite the traces from their seeds before replaying them")
	flag.Parse()
	if err := run(*out, *traces, *generate); err != nil {
		fmt.Fprintln(os.Stderr, "muster-sim:", err)
		os.Exit(1)
	}
}

func run(out, traces string, generate bool) error {
	if generate {
		if err := sim.GenerateTraces(traces); err != nil {
			return err
		}
	}
	outs, err := sim.RunScenarios(traces)
	if err != nil {
		return err
	}
	for _, o := range outs {
		fmt.Fprintf(os.Stderr, "muster-sim: %s: %d jobs x %d variants replayed in %s\n",
			o.Scenario.Name, o.Jobs, len(o.Results), o.Elapsed.Round(time.Millisecond))
	}
	if err := simplot.WritePlots(out, outs); err != nil {
		return err
	}
	summary := sim.Summary(outs)
	fmt.Print(summary)
	return os.WriteFile(filepath.Join(out, "sim-summary.md"), []byte(summary), 0o644)
}
