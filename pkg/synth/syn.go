package synth

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// SynConfig configures EcoAgent-Syn generation.
type SynConfig struct {
	// QueriesPerTool is N in the prompt (the paper: 10–20).
	QueriesPerTool int
	// MinWords and MaxWords bound a query's length in words (the paper: 5–120).
	MinWords, MaxWords int
	// DedupeThreshold drops a query whose word-set Jaccard to a kept one is above it (0.7).
	DedupeThreshold float64
	Negatives       NegativeConfig
	// SplitNames and SplitFractions cut the distinct query texts into splits.
	SplitNames     []string
	SplitFractions []float64
	// Seed drives the per-tool request seeds; NegativeSeed the random negatives; SplitSeed the
	// split assignment. All are recorded in stats.json and the datasheet.
	Seed         int64
	NegativeSeed uint64
	SplitSeed    uint64
	Concurrency  int
	// PromptStyle frames the prompt for a base model (continuation) or an instruction-tuned one.
	PromptStyle PromptStyle
	// Corpus, when not nil, is the benchmark's corpus and the pool of negatives (the whole
	// catalog), of which the tools queries are generated for are a sample; nil means those tools.
	Corpus []catalog.Tool `json:"-"`
	// JournalTag hashes every setting that changes an answer into the journal keys (WithModel).
	JournalTag string
	// AdoptLegacy reuses records journaled before settings were part of the key, as made with
	// the current settings (the caller vouches for it).
	AdoptLegacy bool `json:"-"`
}

// DefaultSynConfig returns the paper's settings with 10 queries per tool.
func DefaultSynConfig() SynConfig {
	return SynConfig{
		QueriesPerTool: 10, MinWords: 5, MaxWords: 120, DedupeThreshold: 0.7,
		Negatives:  NegativeConfig{Hard: 1, Random: 1, Depth: 50},
		SplitNames: []string{"train", "dev", "test"}, SplitFractions: []float64{0.8, 0.1, 0.1},
		Seed: 7, NegativeSeed: 11, SplitSeed: 13, Concurrency: 2,
	}
}

// SynResult is a built EcoAgent-Syn.
type SynResult struct {
	Bench     *bench.Bench
	Negatives []NegativeRecord
	Stats     SynStats
}

// SynStats are the counts of Section 2 of the paper for Syn, with the losses of each stage.
type SynStats struct {
	Tools          int `json:"tools"`
	ToolsOK        int `json:"tools_generated"`
	ToolsFailed    int `json:"tools_failed"`
	ToolsNoQueries int `json:"tools_without_kept_queries"`
	// Stage counts: parsed from the answers, kept by the length filter, kept by dedupe.
	QueriesParsed   int `json:"queries_parsed"`
	DroppedBeyondN  int `json:"dropped_beyond_queries_per_tool"`
	DroppedTooShort int `json:"dropped_too_short"`
	DroppedTooLong  int `json:"dropped_too_long"`
	// DroppedCopiedExample counts queries taken from the prompt's worked example (CopiesExample).
	DroppedCopiedExample int `json:"dropped_copied_example"`
	DroppedNearDup       int `json:"dropped_near_duplicate"`
	Queries              int `json:"queries"`
	PositivePairs        int `json:"positive_pairs"`
	NegativePairs        int `json:"negative_pairs"`
	HardNegativePairs    int `json:"hard_negative_pairs"`
	RandomNegativePair   int `json:"random_negative_pairs"`
	// QueriesPerSplit counts queries in each split.
	QueriesPerSplit map[string]int `json:"queries_per_split"`
	// WordsHistogram counts kept queries by length in words, in bins of 5 ("5-9", "10-14", ...).
	WordsHistogram map[string]int `json:"words_histogram"`
	// Failures lists the tools whose generation failed for good, with the fault of each attempt.
	Failures []ToolFailure  `json:"failures,omitempty"`
	Faults   map[string]int `json:"faults_by_class"`
	Attempts int            `json:"attempts"`
	// RequestSeconds sums the generation requests' times (all attempts of each tool, from the
	// journal); QueriesPerMinute is QueriesParsed per minute of the requests' times each divided
	// by the concurrency it ran at, i.e. the throughput of a run that keeps every slot busy,
	// whatever interruptions and resumptions (at other concurrencies) the journal went through.
	// RequestsWithoutConcurrency counts records journaled before the concurrency was recorded,
	// taken at this run's.
	RequestSeconds             float64 `json:"request_seconds"`
	QueriesPerMinute           float64 `json:"queries_parsed_per_minute"`
	RequestsWithoutConcurrency int     `json:"requests_without_concurrency,omitempty"`
	Retriever                  string  `json:"hard_negative_retriever"`
	// HardNegativeScores is the distribution of the hard negatives' retrieval scores (cosines for
	// a dense retriever).
	HardNegativeScores Distribution `json:"hard_negative_score_distribution"`
}

// ToolFailure is one item that failed every attempt.
type ToolFailure struct {
	Key    string   `json:"key"`
	Faults []string `json:"faults"`
	Error  string   `json:"error"`
}

// SynMaxTokens is the token limit of a generation request asking for n queries: about 40
// tokens per query is ample for 5-120 words on average.
func SynMaxTokens(n int) int { return 48*n + 32 }

// GenerateSyn asks gen for queries for every tool without a successful journal record and
// journals each answer. It returns ctx's error if interrupted (the journal keeps what finished).
func GenerateSyn(ctx context.Context, gen Generator, tools []catalog.Tool, cfg SynConfig, j *Journal, p Progress, now func() time.Time) error {
	if p == nil {
		p = nopProgress{}
	}
	jobs := make([]job, len(tools))
	for i := range tools {
		t := tools[i]
		seed := subSeed(cfg.Seed, t.ID)
		jobs[i] = job{key: cfg.journalKey(t), do: func(ctx context.Context) Record {
			accept := func(text string) error {
				for _, q := range ParseQueries(text) {
					if n := WordCount(q); n >= cfg.MinWords && n <= cfg.MaxWords && !CopiesExample(q, t) {
						return nil
					}
				}
				return errNoQueries
			}
			msgs, stop, prefix := SynMessages(cfg.PromptStyle, t, cfg.QueriesPerTool)
			c, err := gen.Complete(ctx, Request{
				Messages: msgs, Seed: seed, Stop: stop, Prefix: prefix, Accept: accept,
				MaxTokens: SynMaxTokens(cfg.QueriesPerTool),
			})
			if err != nil {
				r := failureRecord(err, seed)
				r.ToolID = t.ID
				return r
			}
			return Record{OK: true, ToolID: t.ID, Raw: c.Text, Queries: ParseQueries(c.Text), Attempts: c.Attempts, Faults: c.Faults, Seed: c.Seed}
		}}
	}
	if cfg.AdoptLegacy {
		if err := adoptLegacy(j, jobs, func(i int) []string { return cfg.legacyKeys(tools[i].ID) }); err != nil {
			return err
		}
	}
	return runJobs(ctx, j, jobs, cfg.Concurrency, "syn: generate", p, now)
}

// AssembleSyn builds EcoAgent-Syn from the journal: length filter, near-duplicate removal (in tool
// order, then answer order), hard and random negatives under r, and splits by query text. r must
// index bench.DocsFromTools of the corpus (cfg.Corpus, or tools when it is nil).
func AssembleSyn(tools []catalog.Tool, j *Journal, r retrieve.Retriever, cfg SynConfig) (*SynResult, error) {
	corpus := tools
	if cfg.Corpus != nil {
		corpus = cfg.Corpus
		in := make(map[string]bool, len(corpus))
		for _, t := range corpus {
			in[t.ID] = true
		}
		for _, t := range tools {
			if !in[t.ID] {
				return nil, fmt.Errorf("syn: tool %s is not in the corpus", t.ID)
			}
		}
	}
	st := SynStats{Tools: len(tools), Faults: map[string]int{}, WordsHistogram: map[string]int{}, QueriesPerSplit: map[string]int{}, Retriever: r.Name()}
	dd, err := NewDeduper(cfg.DedupeThreshold)
	if err != nil {
		return nil, err
	}
	type pos struct{ text, tool string }
	var kept []pos
	busySeconds := 0.0
	for _, t := range tools {
		key := cfg.journalKey(t)
		rec, ok := j.Get(key)
		if !ok {
			st.ToolsFailed++
			st.Failures = append(st.Failures, ToolFailure{Key: key, Error: "no journal record (run interrupted?)"})
			continue
		}
		st.Attempts += rec.Attempts
		st.RequestSeconds += float64(rec.ElapsedMS) / 1000
		// Each request's time over the slots busy beside it: a journal written at concurrency
		// 2 and resumed at 4 gives the throughput of each part, not of 4 throughout.
		conc := rec.Concurrency
		if conc < 1 {
			conc = max(1, cfg.Concurrency) // journaled before the concurrency was recorded
			st.RequestsWithoutConcurrency++
		}
		busySeconds += float64(rec.ElapsedMS) / 1000 / float64(conc)
		for _, f := range rec.Faults {
			st.Faults[f]++
		}
		if !rec.OK {
			st.ToolsFailed++
			st.Failures = append(st.Failures, ToolFailure{Key: rec.Key, Faults: rec.Faults, Error: rec.Error})
			continue
		}
		st.ToolsOK++
		qs := ParseQueries(rec.Raw)
		if len(qs) > cfg.QueriesPerTool {
			// A base model may run on past N; only the first N answers were asked for.
			st.DroppedBeyondN += len(qs) - cfg.QueriesPerTool
			qs = qs[:cfg.QueriesPerTool]
		}
		st.QueriesParsed += len(qs)
		n0 := len(kept)
		for _, q := range qs {
			w := WordCount(q)
			switch {
			case w < cfg.MinWords:
				st.DroppedTooShort++
				continue
			case w > cfg.MaxWords:
				st.DroppedTooLong++
				continue
			case CopiesExample(q, t):
				st.DroppedCopiedExample++
				continue
			}
			if keep, _ := dd.Add(q); !keep {
				st.DroppedNearDup++
				continue
			}
			kept = append(kept, pos{q, t.ID})
		}
		if len(kept) == n0 {
			st.ToolsNoQueries++
		}
	}
	texts := make([]string, len(kept))
	for i, k := range kept {
		texts[i] = k.text
	}
	assign, err := SplitByText(texts, cfg.SplitNames, cfg.SplitFractions, cfg.SplitSeed)
	if err != nil {
		return nil, err
	}
	b := &bench.Bench{Corpus: bench.DocsFromTools(corpus), Splits: map[string]bench.Qrels{}, Tools: corpus}
	for _, name := range cfg.SplitNames {
		b.Splits[name] = bench.Qrels{}
	}
	toolIDs := make([]string, len(corpus))
	for i, t := range corpus {
		toolIDs[i] = t.ID
	}
	rng := rand.New(rand.NewPCG(cfg.NegativeSeed, 0x4e6567))
	if cfg.Negatives.Hard > 0 {
		// One positive per query: MineNegatives asks for depth+1 results.
		if r, err = prefetch(r, texts, negativeDepth(cfg.Negatives)+1); err != nil {
			return nil, err
		}
	}
	var hardScores []float64
	var negs []NegativeRecord
	for _, k := range kept {
		qid := QueryID("syn", k.text)
		split := assign[k.text]
		b.Queries = append(b.Queries, bench.Query{ID: qid, Text: k.text, Metadata: map[string]any{"tool_id": k.tool, "split": split}})
		b.Splits[split][qid] = map[string]int{k.tool: 1}
		st.QueriesPerSplit[split]++
		st.PositivePairs++
		st.WordsHistogram[wordsBin(WordCount(k.text))]++
		ns, err := MineNegatives(r, k.text, map[string]bool{k.tool: true}, toolIDs, cfg.Negatives, rng)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if n.Kind == "hard" {
				st.HardNegativePairs++
				hardScores = append(hardScores, n.Score)
			} else {
				st.RandomNegativePair++
			}
		}
		st.NegativePairs += len(ns)
		negs = append(negs, NegativeRecord{QueryID: qid, Positive: k.tool, Negatives: ns})
	}
	st.Queries = len(b.Queries)
	if busySeconds > 0 {
		st.QueriesPerMinute = float64(st.QueriesParsed) / (busySeconds / 60)
	}
	st.HardNegativeScores = describeRetrievalScores(hardScores, IsCosineRetriever(r.Name()))
	sort.Slice(st.Failures, func(a, c int) bool { return st.Failures[a].Key < st.Failures[c].Key })
	return &SynResult{Bench: b, Negatives: negs, Stats: st}, nil
}

// SynKey is the journal key of a tool's generation request. It holds the number of queries asked
// for, so a rerun with another --queries-per-tool asks again instead of reusing answers to a
// different prompt.
func SynKey(queriesPerTool int, toolID string) string {
	return fmt.Sprintf("syn/n%d/%s", queriesPerTool, toolID)
}

// wordsBin names the 5-word histogram bin of a length ("5-9", "10-14", ...).
func wordsBin(n int) string {
	lo := n / 5 * 5
	return fmt.Sprintf("%d-%d", lo, lo+4)
}
