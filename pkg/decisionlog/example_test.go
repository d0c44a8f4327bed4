package decisionlog_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rated-dev/rated/pkg/decisionlog"
)

// A decision and the outcome of its chosen tool, written and read back. MaxBytes is set tiny to
// show rotation: a line that would make a non-empty file larger than MaxBytes starts the next
// file, so each of the two lines lands in a file of its own.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "decisions")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	w, err := decisionlog.Open(dir, decisionlog.Options{MaxBytes: 1})
	if err != nil {
		panic(err)
	}
	err = errors.Join(w.Write(&decisionlog.Decision{V: decisionlog.Version, Kind: decisionlog.KindDecision, ID: "d1",
		Source: decisionlog.SourceServe, Policy: "static", Query: decisionlog.Query{Text: "weather in Paris"},
		Candidates: []decisionlog.Candidate{{Tool: "weather.get", Semantic: 0.9, Propensity: 1, Rank: decisionlog.Int(0)}},
		Chosen:     "weather.get", ChosenPosition: 0}),
		w.Write(&decisionlog.Outcome{V: decisionlog.Version, Kind: decisionlog.KindOutcome, ID: "d1",
			Tool: "weather.get", Position: 0, Chosen: true, Executed: true, LatencyMS: decisionlog.Float(120)}),
		w.Close())
	if err != nil {
		panic(err)
	}
	files, err := decisionlog.Files(dir, "decisions")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		fmt.Println(filepath.Base(f))
	}
	_, err = decisionlog.ReadFiles(files, func(r decisionlog.Record) error {
		if d := r.Decision; d != nil {
			fmt.Printf("decision %s: %q -> %s\n", d.ID, d.Query.Text, d.Chosen)
		} else {
			fmt.Printf("outcome %s: %s executed=%v in %.0f ms\n", r.Outcome.ID, r.Outcome.Tool, r.Outcome.Executed, *r.Outcome.LatencyMS)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// decisions-000001.jsonl
	// decisions-000002.jsonl
	// decision d1: "weather in Paris" -> weather.get
	// outcome d1: weather.get executed=true in 120 ms
}
