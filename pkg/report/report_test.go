package report

import (
	"bytes"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sample() *Table {
	return &Table{Title: "T", Columns: []string{"Method", "SR"}, Rows: [][]string{{"RATED | full", "83.4%"}, {"a,b", "1"}}, Notes: []string{"n"}}
}

func TestMarkdown(t *testing.T) {
	want := "### T\n\n| Method        | SR    |\n|---------------|-------|\n| RATED \\| full | 83.4% |\n| a,b           | 1     |\n\n- n\n"
	if got := sample().Markdown(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestCSVAndLaTeX(t *testing.T) {
	if got, want := sample().CSV(), "Method,SR\nRATED | full,83.4%\n\"a,b\",1\n"; got != want {
		t.Fatalf("csv %q, want %q", got, want)
	}
	tex := sample().LaTeX()
	if !bytes.Contains([]byte(tex), []byte(`RATED \textbar{} full & 83.4\% \\`)) {
		t.Fatalf("latex does not escape %% and |:\n%s", tex)
	}
	p := (&Table{Columns: []string{"p", "q"}, Rows: [][]string{{"<0.001", ">0.5"}}}).LaTeX()
	if !strings.Contains(p, `\textless{}0.001 & \textgreater{}0.5 \\`) {
		t.Fatalf("latex does not escape < and >:\n%s", p)
	}
}

func TestWriteFilesAndPlot(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFiles(dir, "table2", sample(), map[string]int{"x": 1}); err != nil {
		t.Fatal(err)
	}
	var v map[string]int
	data, _ := os.ReadFile(filepath.Join(dir, "table2.json"))
	if json.Unmarshal(data, &v) != nil || v["x"] != 1 {
		t.Fatalf("json %s", data)
	}
	for _, ext := range []string{".md", ".csv", ".tex"} {
		if _, err := os.Stat(filepath.Join(dir, "table2"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	p := &LinePlot{Title: "sr", XLabel: "step", YLabel: "SR", YMax: 1, MarkerX: 1, MarkerLabel: "onset",
		Series: []Series{{Label: "a", X: []float64{0, 1, 2}, Y: []float64{0.2, 0.5, 0.9}}}}
	path := filepath.Join(dir, "p.png")
	if err := p.Write(path, 400, 300); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() < 100 {
		t.Fatalf("not a PNG: %v", err)
	}
}

// TestLaTeXIsASCII: λ, Δ, the minus sign, ✔ and dashes reached the .tex files as they were,
// and pdflatex stops at such a character ("not set up for use with LaTeX"). Every symbol the
// tables use becomes a command; a line break in a Markdown cell no longer ends the table.
func TestLaTeXIsASCII(t *testing.T) {
	tab := &Table{Title: "λ sweep", Columns: []string{"λ", "ΔSR (95% CI)", "chosen"},
		Rows: [][]string{{"0.12", "−0.4 ± 0.2 · 3 × 2 … µs² → √ – — † ° ≈ ≠ ∞ ₁₂₃ ᵀ ρ θ ε γ α β τ η Σ μ ‘x’ “y”", "✔"}}}
	tex := tab.LaTeX()
	for i, r := range tex {
		if r > 127 {
			t.Fatalf("non-ASCII %q at byte %d of\n%s", r, i, tex)
		}
	}
	for _, want := range []string{`$\lambda$ & $\Delta$SR (95\% CI) & chosen`, `$-$0.4 $\pm$ 0.2`, `& $\surd$ \\`, `\caption{$\lambda$ sweep}`} {
		if !strings.Contains(tex, want) {
			t.Errorf("latex lacks %q:\n%s", want, tex)
		}
	}
	md := (&Table{Columns: []string{"name", "v"}, Rows: [][]string{{"two\nlines", "1"}}}).Markdown()
	if strings.Count(md, "\n") != 3 || !strings.Contains(md, "two<br>lines") {
		t.Fatalf("markdown:\n%s", md)
	}
}
