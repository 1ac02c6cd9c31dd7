// Package simplot draws the fairness simulation's plots (test/sim) with
// gonum/plot: kept in the tools module so the operator's go.mod holds
// no plotting library.
package simplot

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/musterhq/muster/internal/core/scheduler"
	"github.com/musterhq/muster/test/sim"
)

// Panel size of every plot, and the resolution of the PNGs.
const (
	panelW = 5.5 * vg.Inch
	panelH = 3.6 * vg.Inch
	dpi    = 110
)

// PlotDecayShare draws each team's share of the pool over time, one panel
// per variant, with an equal share and the hour "day" starts.
func PlotDecayShare(path string, results []*sim.Result) error {
	var row []*plot.Plot
	for _, r := range results {
		p := newPlot(fmt.Sprintf("GPU share per team: %s", r.Name), "time (h)", fmt.Sprintf("share of the %d-GPU pool (%%)", r.Capacity))
		percentAxis(p)
		window := fmt.Sprintf(`hours %g-%g: "day" submits too; GPU-hours compared`, sim.DayStart.Hours(), sim.DayEnd.Hours())
		if err := addWindow(p, window, sim.DayStart, sim.DayEnd); err != nil {
			return err
		}
		for i, q := range r.Queues {
			pts := make(plotter.XYs, 0, len(r.Samples))
			for _, s := range r.Samples {
				pts = append(pts, plotter.XY{X: s.At.Hours(), Y: pct(float64(s.Used[i]), float64(r.Capacity))})
			}
			if err := addLine(p, fmt.Sprintf("%q", q), pts, teamColor(q), nil); err != nil {
				return err
			}
		}
		if err := addLine(p, "equal share (8 of 16)", plotter.XYs{{X: 0, Y: 50}, {X: r.Horizon.Hours(), Y: 50}}, color.Gray{Y: 120}, []vg.Length{vg.Points(2), vg.Points(3)}); err != nil {
			return err
		}
		row = append(row, p)
	}
	return savePanels(path, [][]*plot.Plot{row})
}

// PlotStarvationWait draws the p50 and p99 time to admission of each size
// class, one panel per class, one bar per variant.
func PlotStarvationWait(path string, results []*sim.Result) error {
	var row []*plot.Plot
	for _, class := range []struct {
		name string
		gpus int
	}{{"1-GPU jobs", 1}, {"16-GPU jobs", sim.Wide}} {
		keep := func(j sim.JobOutcome) bool { return j.GPUs == class.gpus }
		p := newPlot(fmt.Sprintf("%s: time to admission", class.name), "percentile (a job never admitted counts with its wait until the end)", "wait from arrival to admission (min)")
		p.NominalX("p50", "p99")
		var bars []variantBars
		for _, r := range results {
			st := sim.SummariseWaits(r, keep)
			label := fmt.Sprintf("%s (%d jobs", r.Name, st.Jobs)
			if st.NeverAdmitted > 0 {
				label += fmt.Sprintf(", %d never admitted", st.NeverAdmitted)
			}
			bars = append(bars, variantBars{label: label + ")", values: []float64{minutes(st.P50), minutes(st.P99)}})
		}
		if err := addGroupedBars(p, bars, "%.0f"); err != nil {
			return err
		}
		row = append(row, p)
	}
	return savePanels(path, [][]*plot.Plot{row})
}

// PlotYield draws the yield sweep: per yield (hours), the 1-GPU jobs'
// p99 and max waits and the 16-GPU jobs' p99 wait, and the 16-GPU jobs
// never admitted; the "never yields" values as dashed lines.
func PlotYield(path string, points []sim.YieldPoint) error {
	waits := newPlot("What the held room's yield trades", "yieldAfterSeconds (hours; dashed: never yields)", "wait from arrival to admission (min)")
	never := newPlot("16-GPU jobs never admitted in the day", "yieldAfterSeconds (hours; dashed: never yields)", "jobs (of 12)")
	series := []struct {
		label string
		value func(sim.StarvationRow) float64
		p     *plot.Plot
	}{
		{"1-GPU p99", func(r sim.StarvationRow) float64 { return minutes(r.Narrow.P99) }, waits},
		{"1-GPU max", func(r sim.StarvationRow) float64 { return minutes(r.Narrow.Max) }, waits},
		{"16-GPU p99", func(r sim.StarvationRow) float64 { return minutes(r.Wide.P99) }, waits},
		{"16-GPU never admitted", func(r sim.StarvationRow) float64 { return float64(r.Wide.NeverAdmitted) }, never},
	}
	for i, sr := range series {
		var pts plotter.XYs
		var off float64
		for _, p := range points {
			if p.Factor == 0 {
				off = sr.value(p.Row)
				continue
			}
			pts = append(pts, plotter.XY{X: (time.Duration(p.Factor) * sim.StarvationAfter).Hours(), Y: sr.value(p.Row)})
		}
		c := plotutil.Color(i)
		if err := addLine(sr.p, sr.label, pts, c, nil); err != nil {
			return err
		}
		flat := plotter.XYs{{X: pts[0].X, Y: off}, {X: pts[len(pts)-1].X, Y: off}}
		if err := addLine(sr.p, sr.label+", never yields", flat, c, []vg.Length{vg.Points(4), vg.Points(3)}); err != nil {
			return err
		}
	}
	top := 0.0
	for _, p := range points {
		top = max(top, minutes(p.Row.Narrow.Max), minutes(p.Row.Wide.P99))
	}
	waits.Y.Max, never.Y.Max = 1.8*top, 20
	def := (scheduler.DefaultStarvationYieldFactor * sim.StarvationAfter).Hours()
	for _, p := range []*plot.Plot{waits, never} {
		p.Y.Min = 0
		if err := addLine(p, fmt.Sprintf("the default (%d thresholds)", scheduler.DefaultStarvationYieldFactor),
			plotter.XYs{{X: def, Y: 0}, {X: def, Y: p.Y.Max / 1.8}}, color.Gray{Y: 120}, []vg.Length{vg.Points(1), vg.Points(3)}); err != nil {
			return err
		}
		legendTopLeft(p)
	}
	return savePanels(path, [][]*plot.Plot{{waits, never}})
}

// utilisationWindow is the moving average the utilisation plot draws:
// minute samples of whole GPUs are too jagged to compare.
const utilisationWindow = 15 * time.Minute

// PlotUtilisation draws the pool's GPU utilisation over time (a moving
// average), one line per variant, with each variant's mean in its legend.
func PlotUtilisation(path string, results []*sim.Result) error {
	p := newPlot(fmt.Sprintf("GPU utilisation (%g-minute moving average)", utilisationWindow.Minutes()), "time (h)", "GPUs in use (% of the pool)")
	percentAxis(p)
	for i, r := range results {
		label := fmt.Sprintf("%s: mean %.1f%%", r.Name, 100*r.Utilisation(0, r.Horizon))
		if err := addLine(p, label, movingAverage(r, utilisationWindow), plotutil.Color(i), nil); err != nil {
			return err
		}
	}
	// One wide panel: a day of minutes.
	return saveSized(path, [][]*plot.Plot{{p}}, 1.8*panelW, panelH)
}

// movingAverage is the share of the pool in use, averaged over the samples
// of the window ending at each sample.
func movingAverage(r *sim.Result, window time.Duration) plotter.XYs {
	pts := make(plotter.XYs, 0, len(r.Samples))
	sum, from := 0, 0
	for i, s := range r.Samples {
		sum += s.UsedTotal
		for r.Samples[from].At <= s.At-window {
			sum -= r.Samples[from].UsedTotal
			from++
		}
		pts = append(pts, plotter.XY{X: s.At.Hours(), Y: pct(float64(sum)/float64(i-from+1), float64(r.Capacity))})
	}
	return pts
}

// PlotMinRuntime draws, per variant, the preemptions, the GPU-hours they
// lost, and the high-priority jobs' p50 and p99 waits: three panels.
func PlotMinRuntime(path string, results []*sim.Result) error {
	rows := sim.MinRuntimeNumbers(results)
	preemptions := newPlot("Preemptions", "", "low-priority jobs preempted")
	lost := newPlot("Work lost to preemption", "", "GPU-hours lost")
	waits := newPlot("High-priority jobs: time to admission", "percentile", "wait from arrival to admission (min)")
	young := fmt.Sprintf("of which had run < %g min", sim.MinRuntimeSetting.Minutes())
	preemptions.NominalX("all", young)
	lost.NominalX("")
	waits.NominalX("p50", "p99")
	var pb, lb, wb []variantBars
	for _, r := range rows {
		pb = append(pb, variantBars{label: r.Variant, values: []float64{float64(r.Preemptions), float64(r.YoungVictims)}})
		lb = append(lb, variantBars{label: r.Variant, values: []float64{r.LostGPUHours}})
		wb = append(wb, variantBars{label: r.Variant, values: []float64{minutes(r.High.P50), minutes(r.High.P99)}})
	}
	for _, x := range []struct {
		p      *plot.Plot
		bars   []variantBars
		format string
	}{{preemptions, pb, "%.0f"}, {lost, lb, "%.1f"}, {waits, wb, "%.1f"}} {
		if err := addGroupedBars(x.p, x.bars, x.format); err != nil {
			return err
		}
	}
	return savePanels(path, [][]*plot.Plot{{preemptions, lost, waits}})
}

// variantBars is one variant's bars, one value per category of the panel.
type variantBars struct {
	label  string
	values []float64
}

// addGroupedBars draws one bar per variant side by side in each category,
// each labelled with its value, and a legend of the variants above them.
func addGroupedBars(p *plot.Plot, bars []variantBars, format string) error {
	width := vg.Points(min(48, 144/float64(max(len(bars), 1)))) // the groups must not overlap
	top := 0.0
	for i, b := range bars {
		bc, err := plotter.NewBarChart(plotter.Values(b.values), width)
		if err != nil {
			return err
		}
		bc.Color = plotutil.Color(i)
		bc.LineStyle.Width = 0
		bc.Offset = width * vg.Length(2*i-len(bars)+1) / 2
		p.Add(bc)
		p.Legend.Add(b.label, bc)
		xys := make(plotter.XYs, len(b.values))
		texts := make([]string, len(b.values))
		for c, v := range b.values {
			xys[c] = plotter.XY{X: float64(c), Y: v}
			texts[c] = fmt.Sprintf(format, v)
			top = max(top, v)
		}
		labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
		if err != nil {
			return err
		}
		for j := range labels.TextStyle {
			labels.TextStyle[j].XAlign = draw.XCenter
			labels.TextStyle[j].YAlign = draw.YBottom
		}
		labels.Offset = vg.Point{X: bc.Offset, Y: vg.Points(2)}
		p.Add(labels)
	}
	// Half a category of room on each side, and room above the tallest
	// bar for its label and the legend.
	if len(bars) > 0 {
		p.X.Min, p.X.Max = -0.5, float64(len(bars[0].values))-0.5
	}
	p.Y.Min, p.Y.Max = 0, max(top*1.5, 1)
	p.Y.Tick.Marker = belowTicks{max: top * 1.2}
	legendTopLeft(p)
	return nil
}

// percentAxis is a 0-100 % axis with room above for the legend.
func percentAxis(p *plot.Plot) {
	p.Y.Min, p.Y.Max = 0, 150
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 25, Label: "25"},
		{Value: 50, Label: "50"}, {Value: 75, Label: "75"}, {Value: 100, Label: "100"}})
	legendTopLeft(p)
}

// legendTopLeft puts the legend in the plot's top left corner, below the
// title.
func legendTopLeft(p *plot.Plot) {
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = -vg.Points(4)
}

// belowTicks are the default ticks up to max only: the space above is the
// legend's.
type belowTicks struct{ max float64 }

func (b belowTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(lo, b.max) {
		if t.Value <= b.max {
			out = append(out, t)
		}
	}
	return out
}

// addWindow shades the time window from..to in light grey, with a legend
// entry.
func addWindow(p *plot.Plot, label string, from, to time.Duration) error {
	poly, err := plotter.NewPolygon(plotter.XYs{{X: from.Hours(), Y: 0}, {X: to.Hours(), Y: 0}, {X: to.Hours(), Y: 100}, {X: from.Hours(), Y: 100}})
	if err != nil {
		return err
	}
	poly.Color = color.Gray{Y: 232}
	poly.Width = 0
	p.Add(poly)
	p.Legend.Add(label, poly)
	return nil
}

// newPlot is a plot with a title and axis labels.
func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds a line of the given colour (dashed when dashes are given)
// to p, with a legend entry.
func addLine(p *plot.Plot, label string, pts plotter.XYs, c color.Color, dashes []vg.Length) error {
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = c
	l.Width = vg.Points(1.5)
	l.Dashes = dashes
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// teamColor keeps a team's colour the same in every panel.
func teamColor(queue string) color.Color {
	if queue == "night" {
		return color.RGBA{R: 0x2b, G: 0x3f, B: 0x8c, A: 0xff}
	}
	return color.RGBA{R: 0xe0, G: 0x8a, B: 0x00, A: 0xff}
}

// savePanels draws a grid of plots, aligned, into one PNG, each panelW by
// panelH.
func savePanels(path string, rows [][]*plot.Plot) error {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	return saveSized(path, rows, panelW*vg.Length(cols), panelH*vg.Length(len(rows)))
}

// saveSized draws a grid of plots, aligned, into one PNG of w by h.
func saveSized(path string, rows [][]*plot.Plot, w, h vg.Length) error {
	cols := 0
	for _, r := range rows {
		cols = max(cols, len(r))
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi),
		vgimg.UseBackgroundColor(color.White))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(rows), Cols: cols, PadX: vg.Points(16), PadY: vg.Points(16),
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10)}
	canvases := plot.Align(rows, tiles, dc)
	for i, r := range rows {
		for j, p := range r {
			p.Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WritePlots draws each outcome's plots into dir.
func WritePlots(dir string, outs []sim.Outcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, o := range outs {
		var err error
		switch o.Scenario.Name {
		case "decay":
			err = PlotDecayShare(filepath.Join(dir, "sim-decay-share.png"), o.Results)
		case "starvation":
			err = PlotStarvationWait(filepath.Join(dir, "sim-starvation-wait.png"), o.Results)
			if err == nil {
				err = PlotUtilisation(filepath.Join(dir, "sim-starvation-utilisation.png"), o.Results)
			}
			if err == nil {
				err = PlotYield(filepath.Join(dir, "sim-starvation-yield.png"), o.Yield)
			}
		case "minruntime":
			err = PlotMinRuntime(filepath.Join(dir, "sim-minruntime.png"), o.Results)
		}
		if err != nil {
			return fmt.Errorf("%s plots: %w", o.Scenario.Name, err)
		}
	}
	return nil
}

func minutes(d time.Duration) float64 { return d.Minutes() }

func pct(part, whole float64) float64 {
	if whole == 0 {
		return 0
	}
	return 100 * part / whole
}
