package report_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rated-dev/rated/pkg/report"
)

// A Table 2-style table: Percent and PercentCI turn shares into the paper's one-decimal
// percentages (0.5678 ± 0.0123 → "56.8 ± 1.2%"), Markdown pads every column to its widest
// cell in runes (here the 11 of "56.8 ± 1.2%") and escapes "|", and LaTeX escapes "%" and "|" (as \textbar{}) and
// typesets "±" in math mode.
func ExampleTable() {
	t := &report.Table{
		Title:   "Post-Fail SR",
		Columns: []string{"Method", "SR"},
		Rows: [][]string{
			{"BM25 | static", report.Percent(0.4123)},
			{"RATED", report.PercentCI(0.5678, 0.0123)},
		},
		Notes: []string{"3 seeds"},
	}
	fmt.Print(t.Markdown())
	fmt.Print(t.LaTeX())
	// Output:
	// ### Post-Fail SR
	//
	// | Method         | SR          |
	// |----------------|-------------|
	// | BM25 \| static | 41.2%       |
	// | RATED          | 56.8 ± 1.2% |
	//
	// - 3 seeds
	// \begin{table}[t]
	// \centering
	// \begin{tabular}{lr}
	// \toprule
	// Method & SR \\
	// \midrule
	// BM25 \textbar{} static & 41.2\% \\
	// RATED & 56.8 $\pm$ 1.2\% \\
	// \bottomrule
	// \end{tabular}
	// \caption{Post-Fail SR}
	// \end{table}
}

// WriteFiles writes one table in every format beside each other, and the JSON value when given.
func ExampleWriteFiles() {
	dir, err := os.MkdirTemp("", "report")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	t := &report.Table{Columns: []string{"Method", "MRR"}, Rows: [][]string{{"BM25", "0.412"}}}
	if err := report.WriteFiles(dir, "table1", t, map[string]float64{"BM25": 0.412}); err != nil {
		panic(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		fmt.Println(e.Name())
	}
	csv, err := os.ReadFile(filepath.Join(dir, "table1.csv"))
	if err != nil {
		panic(err)
	}
	fmt.Print(string(csv))
	// Output:
	// table1.csv
	// table1.json
	// table1.md
	// table1.tex
	// Method,MRR
	// BM25,0.412
}
