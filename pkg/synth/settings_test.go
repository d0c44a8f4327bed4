package synth

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// countingGen answers every generation request with three queries naming the tool.
type countingGen struct{ n atomic.Int64 }

func (g *countingGen) Model() string { return "stub" }
func (g *countingGen) Complete(_ context.Context, r Request) (Completion, error) {
	g.n.Add(1)
	m := toolNameRE.FindAllStringSubmatch(r.Messages[0].Content, -1)
	return Completion{Text: r.Prefix + queriesFor(m[len(m)-1][1]), Attempts: 1, Seed: r.Seed}, nil
}

// TestEverySettingIsInTheJournalKey: each setting that changes an answer gives another tag.
func TestEverySettingIsInTheJournalKey(t *testing.T) {
	ms := ModelSettings{Model: "m", Digest: "d", Temperature: 0.8, MaxTokens: 512, ChatTemplate: "plain"}
	base := DefaultSynConfig()
	tags := map[string]string{"base": base.WithModel(ms).JournalTag}
	vary := map[string]func() SynConfig{
		"seed":     func() SynConfig { c := base; c.Seed++; return c.WithModel(ms) },
		"queries":  func() SynConfig { c := base; c.QueriesPerTool++; return c.WithModel(ms) },
		"minwords": func() SynConfig { c := base; c.MinWords++; return c.WithModel(ms) },
		"style":    func() SynConfig { c := base; c.PromptStyle = StyleInstruct; return c.WithModel(ms) },
		"model":    func() SynConfig { m := ms; m.Model = "n"; return base.WithModel(m) },
		"digest":   func() SynConfig { m := ms; m.Digest = "e"; return base.WithModel(m) },
		"temp":     func() SynConfig { m := ms; m.Temperature = 0.9; return base.WithModel(m) },
		"template": func() SynConfig { m := ms; m.ChatTemplate = "gemma3"; return base.WithModel(m) },
	}
	for name, f := range vary {
		tag := f().JournalTag
		for other, t2 := range tags {
			if tag == t2 {
				t.Errorf("%s and %s share the tag %s", name, other, tag)
			}
		}
		tags[name] = tag
	}
	// Settings that do not change an answer (splits, negatives) keep the tag.
	c := base
	c.SplitSeed, c.NegativeSeed, c.Concurrency = 99, 98, 7
	if c.WithModel(ms).JournalTag != tags["base"] {
		t.Error("split seed, negative seed or concurrency changed the tag")
	}
}

// TestLegacyRecordsAreAdoptedOnlyWhenAsked: records of a journal written before the tag existed
// are not reused, unless AdoptLegacy vouches for them; adopted records are copied under the new
// key, so the next run needs no flag.
func TestLegacyRecordsAreAdoptedOnlyWhenAsked(t *testing.T) {
	tools := syntheticTools(4)
	path := filepath.Join(t.TempDir(), "syn.jsonl")
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool = 3
	gen := &countingGen{}
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := GenerateSyn(context.Background(), gen, tools, cfg, j, nil, time.Now); err != nil { // legacy keys
		t.Fatal(err)
	}
	if LegacyRecords(j) != 4 || gen.n.Load() != 4 {
		t.Fatalf("legacy records %d, requests %d", LegacyRecords(j), gen.n.Load())
	}
	tagged := cfg.WithModel(ModelSettings{Model: "stub"})
	adopt := tagged
	adopt.AdoptLegacy = true
	for i, c := range []struct {
		cfg  SynConfig
		want int64
	}{{adopt, 0}, {tagged, 0}} {
		before := gen.n.Load()
		if err := GenerateSyn(context.Background(), gen, tools, c.cfg, j, nil, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := gen.n.Load() - before; got != c.want {
			t.Errorf("run %d: %d requests, want %d", i, got, c.want)
		}
	}
	res, err := AssembleSyn(tools, j, retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params()), tagged)
	if err != nil || res.Stats.ToolsOK != 4 {
		t.Errorf("assembled from adopted records: %v", err)
	}
	// Without adoption, another tag asks again.
	other := cfg.WithModel(ModelSettings{Model: "other"})
	before := gen.n.Load()
	if err := GenerateSyn(context.Background(), gen, tools, other, j, nil, time.Now); err != nil {
		t.Fatal(err)
	}
	if got := gen.n.Load() - before; got != 4 {
		t.Errorf("another model: %d requests, want 4", got)
	}
	j.Close()
}

// TestEditedPromptAsksAgain: the journal key held the settings but not what the prompt was
// filled with, so a tool whose description changed between runs (a recrawl) reused the queries
// written for its old description. Only the edited tool is asked again; records under the
// earlier layout (settings tag, no prompt tag) count as legacy and are adopted only when asked.
func TestEditedPromptAsksAgain(t *testing.T) {
	tools := syntheticTools(3)
	cfg := DefaultSynConfig()
	cfg.QueriesPerTool = 3
	cfg = cfg.WithModel(ModelSettings{Model: "stub"})
	j, err := OpenJournal(filepath.Join(t.TempDir(), "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	gen := &countingGen{}
	run := func(tools []catalog.Tool, cfg SynConfig) int64 {
		t.Helper()
		before := gen.n.Load()
		if err := GenerateSyn(context.Background(), gen, tools, cfg, j, nil, time.Now); err != nil {
			t.Fatal(err)
		}
		return gen.n.Load() - before
	}
	if got := run(tools, cfg); got != 3 {
		t.Fatalf("first run: %d requests, want 3", got)
	}
	if got := run(tools, cfg); got != 0 {
		t.Fatalf("unchanged rerun: %d requests, want 0", got)
	}
	edited := slices.Clone(tools)
	edited[1].Description = "sends the weekly invoice to the client"
	if got := run(edited, cfg); got != 1 {
		t.Fatalf("one description edited: %d requests, want 1", got)
	}
	if got := run(tools, cfg); got != 0 {
		t.Fatalf("back to the old description: %d requests, want 0 (its answer stays in the journal)", got)
	}

	// A journal of the earlier layout: the same records under "syn@<settings>/n3/<id>".
	old, err := OpenJournal(filepath.Join(t.TempDir(), "old.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	for _, r := range j.Records() {
		head, rest, _ := strings.Cut(r.Key, "/")
		r.Key = head[:strings.Index(head, ".")] + "/" + rest
		if err := old.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if n := LegacyRecords(old); n != 3 {
		t.Fatalf("legacy records of the earlier layout: %d, want 3", n)
	}
	j = old
	if got := run(tools, cfg); got != 3 {
		t.Fatalf("earlier layout without adoption: %d requests, want 3", got)
	}
	fresh, err := OpenJournal(filepath.Join(t.TempDir(), "fresh.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	for _, r := range old.Records() {
		if isLegacyKey(r.Key) {
			fresh.Append(r)
		}
	}
	j = fresh
	adopt := cfg
	adopt.AdoptLegacy = true
	if got := run(tools, adopt); got != 0 {
		t.Fatalf("earlier layout adopted: %d requests, want 0", got)
	}
}

// scoreGen answers every validator request with the same score.
type scoreGen struct{ n atomic.Int64 }

func (g *scoreGen) Model() string { return "stub" }
func (g *scoreGen) Complete(_ context.Context, r Request) (Completion, error) {
	g.n.Add(1)
	return Completion{Text: `{"score": 0.9}`, Attempts: 1, Seed: r.Seed}, nil
}

// TestEditedRealQueryAsksAgain: a real query whose text changed under the same id (an edited
// --real-queries file) reused the verdict on the old text.
func TestEditedRealQueryAsksAgain(t *testing.T) {
	tools := syntheticTools(2)
	cfg := DefaultRealConfig().WithModel(ModelSettings{Model: "stub"})
	j, err := OpenJournal(filepath.Join(t.TempDir(), "real.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	pairs := func(text string) []RealPair {
		return []RealPair{{Query: RealQuery{ID: "q1", Text: text}, ToolID: tools[0].ID, RetrievalScore: 1},
			{Query: RealQuery{ID: "q2", Text: "book a table"}, ToolID: tools[1].ID, RetrievalScore: 1}}
	}
	gen := &scoreGen{}
	for i, c := range []struct {
		text string
		want int64
	}{{"send an email", 2}, {"send an email", 0}, {"send a fax", 1}, {"send an email", 0}} {
		before := gen.n.Load()
		if err := ValidateReal(context.Background(), gen, pairs(c.text), tools, cfg, j, nil, time.Now); err != nil {
			t.Fatal(err)
		}
		if got := gen.n.Load() - before; got != c.want {
			t.Errorf("run %d (%q): %d requests, want %d", i, c.text, got, c.want)
		}
	}
}
