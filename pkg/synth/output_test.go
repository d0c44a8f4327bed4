package synth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// TestDatasheetStatesWhatWasSent: the datasheet quoted the base-model continuation prompt for
// an instruct-style run, whose requests carry SynInstructTemplate and the validator's suffix,
// and gave the configuration's max_tokens as the requests' limit, which every request
// overrides (Syn: 48 per query asked + 32, Real: 12).
func TestDatasheetStatesWhatWasSent(t *testing.T) {
	tools := syntheticTools(4)
	dir := t.TempDir()
	syn := DefaultSynConfig()
	syn.QueriesPerTool, syn.PromptStyle = 3, StyleInstruct
	sj, err := OpenJournal(filepath.Join(dir, "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer sj.Close()
	// countingGen reads the tool's name off a "Tool: <name>" line, which both styles carry.
	if err := GenerateSyn(context.Background(), &countingGen{}, tools, syn, sj, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	ret := retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params())
	sres, err := AssembleSyn(tools, sj, ret, syn)
	if err != nil {
		t.Fatal(err)
	}
	real := DefaultRealConfig()
	real.PromptStyle, real.MinRetrievalScore = StyleInstruct, 0
	queries := []RealQuery{{ID: "q1", Text: "please do the " + wordFor(1) + " job for me today"}}
	pairs := []RealPair{{Query: queries[0], ToolID: tools[0].ID, RetrievalScore: 1}}
	rj, err := OpenJournal(filepath.Join(dir, "real.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer rj.Close()
	if err := ValidateReal(context.Background(), &scoreGen{}, pairs, tools, real, rj, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	rres, err := AssembleReal(tools, queries, pairs, rj, ret.Name(), real)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	o := Output{Info: RunInfo{Tool: "test", MaxTokens: 512, Syn: &syn, Real: &real}, Syn: sres, Real: rres}
	if err := o.Write(out); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "DATASHEET.md"))
	if err != nil {
		t.Fatal(err)
	}
	ds := string(raw)
	firstLine := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }
	for _, want := range []string{
		firstLine(SynInstructTemplate),
		strings.TrimSpace(ValidatorInstructSuffix),
		"max tokens per request 176 for Syn (48 per query asked + 32), 12 for the Real validator (the configuration's max_tokens, 512, applies only to requests that set none)",
	} {
		if !strings.Contains(ds, want) {
			t.Errorf("DATASHEET.md lacks %q", want)
		}
	}
	if strings.Contains(ds, firstLine(SynPromptTemplate)) || strings.Contains(ds, `continues the list after "1."`) {
		t.Error("DATASHEET.md quotes the continuation prompt of the base style")
	}
}
