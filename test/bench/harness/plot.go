package harness

import (
	"cmp"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"slices"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Plot geometry: one panel per class, side by side.
const (
	panelW, panelH = 420, 320
	marginL        = 56
	marginR        = 12
	marginT        = 28
	marginB        = 44
	legendRowH     = 22
)

// Series colours, by target and mode.
var seriesColors = map[string]color.RGBA{
	"muster/parity":         {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"muster/kueue-defaults": {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"muster/unthrottled":    {R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	"kueue/parity":          {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"kueue/kueue-defaults":  {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"kueue/unthrottled":     {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

// PlotTimeToAdmission draws, per workload class, the cumulative
// distribution of time to admission (log-scale seconds) of every target and
// mode, all repetitions pooled, as a PNG.
func PlotTimeToAdmission(path string, results []*Result, classes []string) error {
	if len(classes) == 0 {
		return nil
	}
	series := pooledSamples(results)
	width := panelW * len(classes)
	entries := legendEntries(series, width)
	legendH := legendRowH
	if len(entries) > 0 {
		legendH *= entries[len(entries)-1].row + 1
	}
	img := image.NewRGBA(image.Rect(0, 0, width, panelH+legendH))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	lo, hi := sampleRange(series)
	for i, class := range classes {
		drawPanel(img, image.Pt(i*panelW, legendH), class, series, lo, hi)
	}
	for _, e := range entries {
		y := e.row * legendRowH
		fill(img, image.Rect(e.x, y+8, e.x+18, y+14), e.color)
		label(img, e.x+22, y+15, e.name)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return png.Encode(f, img)
}

type seriesKey struct{ target, mode, class string }

func (k seriesKey) color() color.RGBA { return seriesColors[k.target+"/"+k.mode] }

func pooledSamples(results []*Result) map[seriesKey][]float64 {
	out := map[seriesKey][]float64{}
	for _, r := range results {
		for class, s := range r.Samples {
			k := seriesKey{r.Target, r.Mode, class}
			out[k] = append(out[k], s...)
		}
	}
	for _, s := range out {
		slices.Sort(s)
	}
	return out
}

// sampleRange is the x range in log10(seconds), widened to whole decades.
func sampleRange(series map[seriesKey][]float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		if len(s) > 0 {
			lo, hi = min(lo, s[0]), max(hi, s[len(s)-1])
		}
	}
	if math.IsInf(lo, 0) {
		return -2, 2
	}
	l := math.Floor(math.Log10(max(lo, 1) / 1000))
	h := math.Ceil(math.Log10(max(hi, 1) / 1000))
	if h <= l {
		h = l + 1
	}
	return l, h
}

func drawPanel(img *image.RGBA, at image.Point, class string, series map[seriesKey][]float64, lo, hi float64) {
	plot := image.Rect(at.X+marginL, at.Y+marginT, at.X+panelW-marginR, at.Y+panelH-marginB)
	grey := color.RGBA{R: 0xcc, G: 0xcc, B: 0xcc, A: 0xff}
	for d := lo; d <= hi; d++ {
		x := plot.Min.X + int(float64(plot.Dx())*(d-lo)/(hi-lo))
		vline(img, x, plot.Min.Y, plot.Max.Y, grey)
		label(img, x-12, plot.Max.Y+16, decadeLabel(d))
	}
	for p := 0; p <= 4; p++ {
		y := plot.Max.Y - plot.Dy()*p/4
		hline(img, plot.Min.X, plot.Max.X, y, grey)
		label(img, at.X+18, y+4, fmt.Sprintf("%d%%", p*25))
	}
	rect(img, plot, color.Black)
	label(img, plot.Min.X, at.Y+18, class+": share admitted within t")
	label(img, plot.Min.X+plot.Dx()/2-60, plot.Max.Y+34, "time to admission")
	keys := sortedKeys(series)
	for _, k := range keys {
		if k.class == class {
			drawCDF(img, plot, series[k], lo, hi, k.color())
		}
	}
}

func drawCDF(img *image.RGBA, plot image.Rectangle, s []float64, lo, hi float64, c color.RGBA) {
	prevX, prevY := -1, -1
	for i, ms := range s {
		x := plot.Min.X + int(float64(plot.Dx())*(math.Log10(max(ms, 1)/1000)-lo)/(hi-lo))
		y := plot.Max.Y - int(float64(plot.Dy())*float64(i+1)/float64(len(s)))
		if prevX >= 0 {
			hline(img, prevX, x, prevY, c) // step: flat, then up
			vline(img, x, y, prevY, c)
		}
		prevX, prevY = x, y
	}
}

type legendEntry struct {
	name   string
	color  color.RGBA
	x, row int
}

// legendEntries lays out one entry per target and mode, in rows that fit
// the width.
func legendEntries(series map[seriesKey][]float64, width int) []legendEntry {
	x, row := marginL, 0
	var out []legendEntry
	seen := map[string]bool{}
	for _, k := range sortedKeys(series) {
		name := k.target + " " + k.mode
		if seen[name] {
			continue
		}
		seen[name] = true
		w := 40 + 7*len(name)
		if x > marginL && x+w > width {
			x, row = marginL, row+1
		}
		out = append(out, legendEntry{name: name, color: k.color(), x: x, row: row})
		x += w
	}
	return out
}

func sortedKeys(series map[seriesKey][]float64) []seriesKey {
	keys := make([]seriesKey, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	// muster first, then the modes in report order, then the class.
	slices.SortFunc(keys, func(a, b seriesKey) int {
		return cmp.Or(strings.Compare(b.target, a.target), cmp.Compare(modeRank(a.mode), modeRank(b.mode)),
			strings.Compare(a.mode, b.mode), strings.Compare(a.class, b.class))
	})
	return keys
}

func decadeLabel(d float64) string {
	switch {
	case d < 0:
		return fmt.Sprintf("%gms", math.Pow(10, d+3))
	default:
		return fmt.Sprintf("%gs", math.Pow(10, d))
	}
}

func label(img *image.RGBA, x, y int, s string) {
	d := &font.Drawer{Dst: img, Src: image.Black, Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	if x0 > x1 {
		x0, x1 = x1, x0
	}
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
		img.Set(x, y+1, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	if y0 > y1 {
		y0, y1 = y1, y0
	}
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
		img.Set(x+1, y, c)
	}
}

func rect(img *image.RGBA, r image.Rectangle, c color.Color) {
	hline(img, r.Min.X, r.Max.X, r.Min.Y, c)
	hline(img, r.Min.X, r.Max.X, r.Max.Y, c)
	vline(img, r.Min.X, r.Min.Y, r.Max.Y, c)
	vline(img, r.Max.X, r.Min.Y, r.Max.Y, c)
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, &image.Uniform{C: c}, image.Point{}, draw.Src)
}
