package synth

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
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
