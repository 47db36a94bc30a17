package backtest

import (
	"bytes"
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// chartPoints is the resolution of the chart: more than the reported curve,
// still cheap to draw.
const chartPoints = 1600

// Chart size in points (1/72 inch); vgimg renders at 96 dpi.
const (
	chartWidth  = 9 * vg.Inch
	chartHeight = 6 * vg.Inch
)

// PNG draws the result's equity curve above its drawdown as a PNG image. It
// uses the full curve when the result has it (a run from this process) and
// the reported points otherwise. The same result gives the same bytes.
func PNG(r *Result) ([]byte, error) {
	pts := r.Equity
	if len(r.Curve.Equity) > 0 {
		pts = Downsample(r.Curve, r.Settings.Capital, chartPoints)
	}
	if len(pts) == 0 {
		return nil, invalidf("the result has no equity curve to draw")
	}
	eq := make(plotter.XYs, len(pts))
	dd := make(plotter.XYs, 0, len(pts)+2)
	for i, p := range pts {
		x := float64(p.Time.Unix())
		eq[i] = plotter.XY{X: x, Y: p.Equity}
		dd = append(dd, plotter.XY{X: x, Y: -100 * p.Drawdown})
	}
	// Close the drawdown polygon along the zero line.
	dd = append(dd, plotter.XY{X: eq[len(eq)-1].X, Y: 0}, plotter.XY{X: eq[0].X, Y: 0})

	ticks := plot.TimeTicks{Format: "2006-01-02"}
	top := plot.New()
	top.Title.Text = chartTitle(r)
	top.Y.Label.Text = "equity"
	top.X.Tick.Marker = ticks
	top.Add(plotter.NewGrid())
	line, err := plotter.NewLine(eq)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	line.Color = color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff}
	line.Width = vg.Points(1.2)
	top.Add(line)

	bottom := plot.New()
	bottom.Y.Label.Text = "drawdown %"
	bottom.X.Tick.Marker = ticks
	bottom.Add(plotter.NewGrid())
	poly, err := plotter.NewPolygon(dd)
	if err != nil {
		return nil, fmt.Errorf("chart: %w", err)
	}
	poly.Color = color.RGBA{R: 0xd0, G: 0x40, B: 0x30, A: 0x80}
	poly.LineStyle.Width = 0
	bottom.Add(poly)
	bottom.Y.Max = 0

	img := vgimg.New(chartWidth, chartHeight)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12), PadY: vg.Points(8)}
	plots := [][]*plot.Plot{{top}, {bottom}}
	canvases := plot.Align(plots, tiles, dc)
	top.Draw(canvases[0][0])
	bottom.Draw(canvases[1][0])

	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart: encode png: %w", err)
	}
	return buf.Bytes(), nil
}

func chartTitle(r *Result) string {
	m := r.Metrics
	title := fmt.Sprintf("total return %+.2f%%   max drawdown %.2f%%   trades %d", 100*m.TotalReturn, 100*m.MaxDrawdown, m.Trades)
	if r.Series != "" {
		title = r.Series + "   " + title
	}
	return title
}
