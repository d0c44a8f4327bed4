// Package report renders result tables (Markdown, CSV, JSON, LaTeX) and plots (PNG, SVG), and
// writes them atomically.
package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// Table is a titled grid of cells with notes printed under it.
type Table struct {
	Title   string
	Columns []string
	Rows    [][]string
	Notes   []string
	// KeyColumns is how many leading columns together name a row (0 counts as 1): Table 2 with
	// several feedback protocols repeats each method once per protocol, so its rows are named by
	// protocol and method.
	KeyColumns int
}

// Keys is the number of leading columns that name a row: KeyColumns, at least 1.
func (t *Table) Keys() int { return max(1, t.KeyColumns) }

// RowKey names row r by its key columns joined with " / " ("execution / RATED (Full)").
func (t *Table) RowKey(r []string) string {
	return strings.Join(r[:min(len(r), t.Keys())], " / ")
}

// Markdown renders the table as GitHub-flavoured Markdown with aligned columns.
func (t *Table) Markdown() string {
	// A "|" would split the cell and a line break end the table: escaped, and written as <br>.
	cell := func(s string) string {
		return strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>").Replace(s)
	}
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = len([]rune(cell(c)))
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(widths) {
				widths[i] = max(widths[i], len([]rune(cell(c))))
			}
		}
	}
	var b strings.Builder
	if t.Title != "" {
		fmt.Fprintf(&b, "### %s\n\n", t.Title)
	}
	line := func(cells []string) {
		b.WriteString("|")
		for i := range t.Columns {
			c := ""
			if i < len(cells) {
				c = cell(cells[i])
			}
			fmt.Fprintf(&b, " %s%s |", c, strings.Repeat(" ", widths[i]-len([]rune(c))))
		}
		b.WriteString("\n")
	}
	line(t.Columns)
	b.WriteString("|")
	for i := range t.Columns {
		b.WriteString(strings.Repeat("-", widths[i]+2) + "|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		line(r)
	}
	if len(t.Notes) > 0 {
		b.WriteString("\n")
		for _, n := range t.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

// CSV renders the header and rows as CSV with RFC 4180's quoting (encoding/csv), lines ending
// in LF.
func (t *Table) CSV() string {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(t.Columns)
	w.WriteAll(t.Rows)
	return buf.String()
}

// latexEscaper escapes LaTeX's special characters and writes the symbols rated's tables use
// (±, ≥, λ, Δ, the minus sign, ✔, dashes, µ, …) as commands that need no package: with pdflatex
// a character like λ or ✔ in the input stops the build ("Unicode character … not set up").
var latexEscaper = strings.NewReplacer("|", `\textbar{}`, "<", `\textless{}`, ">", `\textgreater{}`, `\`, `\textbackslash{}`,
	"&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	"±", `$\pm$`, "≥", `$\geq$`, "≤", `$\leq$`, "≠", `$\neq$`, "≈", `$\approx$`, "×", `$\times$`, "·", `$\cdot$`, "−", `$-$`,
	"–", `--`, "—", `---`, "…", `\ldots{}`, "→", `$\rightarrow$`, "†", `\dag{}`, "°", `$^\circ$`, "²", `$^2$`, "√", `$\surd$`,
	"✔", `$\surd$`, "µ", `$\mu$`, "μ", `$\mu$`, "λ", `$\lambda$`, "Δ", `$\Delta$`, "Σ", `$\Sigma$`, "ρ", `$\rho$`, "θ", `$\theta$`,
	"ε", `$\varepsilon$`, "γ", `$\gamma$`, "α", `$\alpha$`, "β", `$\beta$`, "τ", `$\tau$`, "η", `$\eta$`, "∞", `$\infty$`,
	"₁", `$_1$`, "₂", `$_2$`, "₃", `$_3$`, "ᵀ", `$^\top$`, "‘", "`", "’", "'", "“", "``", "”", "''")

// LaTeX renders a booktabs tabular inside a table environment. "|", "<" and ">" are written as
// text commands: in LaTeX's default font encoding (OT1) they would print as "—", "¡" and "¿"
// (p-values such as "<0.001" are common cells).
func (t *Table) LaTeX() string {
	esc := latexEscaper
	var b strings.Builder
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\begin{tabular}{l%s}\n\\toprule\n", strings.Repeat("r", max(0, len(t.Columns)-1)))
	cells := func(r []string) string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = esc.Replace(c)
		}
		return strings.Join(out, " & ") + " \\\\\n"
	}
	b.WriteString(cells(t.Columns))
	b.WriteString("\\midrule\n")
	for _, r := range t.Rows {
		b.WriteString(cells(r))
	}
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	if t.Title != "" {
		fmt.Fprintf(&b, "\\caption{%s}\n", esc.Replace(t.Title))
	}
	b.WriteString("\\end{table}\n")
	return b.String()
}

// WriteFiles writes dir/base.md, .csv and .tex from t, and dir/base.json from jsonValue (when
// not nil), each atomically.
func WriteFiles(dir, base string, t *Table, jsonValue any) error {
	files := map[string]string{".md": t.Markdown(), ".csv": t.CSV(), ".tex": t.LaTeX()}
	if jsonValue != nil {
		data, err := json.MarshalIndent(jsonValue, "", "  ")
		if err != nil {
			return fmt.Errorf("encode %s.json: %w", base, err)
		}
		files[".json"] = string(data) + "\n"
	}
	for ext, content := range files {
		if err := atomicfile.WriteBytes(filepath.Join(dir, base+ext), []byte(content)); err != nil {
			return err
		}
	}
	return nil
}

// Percent formats a share as a percentage with one decimal ("83.4%").
func Percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// PercentCI formats a share and its 95% half-width ("83.4 ± 0.3%").
func PercentCI(x, ci float64) string { return fmt.Sprintf("%.1f ± %.1f%%", 100*x, 100*ci) }
