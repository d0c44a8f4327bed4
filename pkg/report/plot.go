package report

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// Series is one line of a plot.
type Series struct {
	Label string
	X, Y  []float64
}

// LinePlot describes a line chart with an optional vertical marker (the failure onset).
type LinePlot struct {
	Title, XLabel, YLabel string
	Series                []Series
	MarkerX               float64
	MarkerLabel           string
	YMin, YMax            float64
}

// Write renders the plot to path; the extension (.png or .svg) selects the format.
func (p *LinePlot) Write(path string, width, height vg.Length) error {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.Y.Min, pl.Y.Max = p.YMin, p.YMax
	// Top right: the curves of a success-rate plot rarely reach the top of a [0, 1] axis.
	pl.Legend.Top = true
	pl.Legend.Left = false
	pl.Add(plotter.NewGrid())
	for i, s := range p.Series {
		pts := make(plotter.XYs, len(s.X))
		for j := range s.X {
			pts[j].X, pts[j].Y = s.X[j], s.Y[j]
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot %s, series %s: %w", path, s.Label, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 7)
		line.Width = vg.Points(1.2)
		pl.Add(line)
		pl.Legend.Add(s.Label, line)
	}
	if p.MarkerLabel != "" {
		marker, err := plotter.NewLine(plotter.XYs{{X: p.MarkerX, Y: p.YMin}, {X: p.MarkerX, Y: p.YMax}})
		if err != nil {
			return err
		}
		marker.Color = color.Gray{Y: 80}
		marker.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		pl.Add(marker)
		pl.Legend.Add(p.MarkerLabel, marker)
	}
	w, err := pl.WriterTo(width, height, filepath.Ext(path)[1:])
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return atomicfile.Write(path, func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	})
}
