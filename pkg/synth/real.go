package synth

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// RealQuery is one real user query (ToolBench's queries.jsonl: query_id, group, query).
type RealQuery struct {
	ID    string
	Group string
	Text  string
}

// ReadRealQueries reads ToolBench queries, one JSON object per line with "query_id" (number or
// string), "group" and "query". A malformed line is an error naming the file and line.
func ReadRealQueries(path string) ([]RealQuery, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("real queries: %w", err)
	}
	return ParseRealQueries(path, data)
}

// ParseRealQueries parses ToolBench queries in the format of ReadRealQueries; name labels errors
// (a path, or the embedded copy's name).
func ParseRealQueries(name string, data []byte) ([]RealQuery, error) {
	path := name
	var out []RealQuery
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var rec struct {
			ID    json.RawMessage `json:"query_id"`
			Group string          `json:"group"`
			Query string          `json:"query"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		id := string(bytes.Trim(rec.ID, `"`))
		if id == "" || rec.Query == "" {
			return nil, fmt.Errorf("%s:%d: want query_id and query", path, line)
		}
		id = rec.Group + "-" + id
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s:%d: duplicate query id %s (first on line %d)", path, line, id, prev)
		}
		seen[id] = line
		out = append(out, RealQuery{ID: id, Group: rec.Group, Text: rec.Query})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", path, line+1, err)
	}
	return out, nil
}

// RealConfig configures EcoAgent-Real construction.
type RealConfig struct {
	// TopK candidates per query from the retriever (the paper: 5).
	TopK int
	// MinRetrievalScore drops candidate pairs scoring below it under the retriever (the paper:
	// cosine 0.7 with GTE-Large; BM25 scores are unbounded, so the value depends on the retriever:
	// DefaultMinRetrievalScore gives 0.7 for a dense retriever and 0 for BM25).
	MinRetrievalScore float64
	// KeepScore keeps pairs whose validator score is at least it (the paper: 0.85).
	KeepScore float64
	// DedupeThreshold removes near-duplicate queries (Jaccard of word sets above it).
	DedupeThreshold float64
	SplitNames      []string
	SplitFractions  []float64
	SplitSeed       uint64
	Seed            int64
	Concurrency     int
	// PromptStyle frames the validator prompt (see SynConfig.PromptStyle).
	PromptStyle PromptStyle
	// JournalTag hashes every setting that changes a verdict into the journal keys (WithModel).
	JournalTag string
	// AdoptLegacy reuses records journaled before settings were part of the key.
	AdoptLegacy bool `json:"-"`
}

// DefaultRealConfig returns the paper's settings, with the retrieval threshold at 0 (keep all
// top-5 candidates), the right value for BM25, which has no fixed score scale; a caller with a
// dense retriever sets it to DefaultMinRetrievalScore (the paper's cosine 0.7).
func DefaultRealConfig() RealConfig {
	return RealConfig{
		TopK: 5, MinRetrievalScore: 0, KeepScore: 0.85, DedupeThreshold: 0.7,
		SplitNames: []string{"dev", "test"}, SplitFractions: []float64{0.5, 0.5},
		SplitSeed: 17, Seed: 19, Concurrency: 2,
	}
}

// RealPair is a (query, tool) candidate with its scores.
type RealPair struct {
	Query          RealQuery
	ToolID         string
	RetrievalScore float64
}

// RealStats are the counts of Section 2 of the paper for Real, with the losses of each stage.
type RealStats struct {
	InputQueries       int            `json:"input_queries"`
	CandidatePairs     int            `json:"candidate_pairs"`
	DroppedLowScore    int            `json:"dropped_below_retrieval_threshold"`
	ValidatedPairs     int            `json:"validated_pairs"`
	ValidationFailed   int            `json:"validation_failed"`
	DroppedByValidator int            `json:"dropped_by_validator"`
	KeptPairsRaw       int            `json:"kept_pairs_before_dedupe"`
	DroppedNearDup     int            `json:"queries_dropped_near_duplicate"`
	Queries            int            `json:"queries"`
	VerifiedPairs      int            `json:"verified_pairs"`
	QueriesPerSplit    map[string]int `json:"queries_per_split"`
	WordsHistogram     map[string]int `json:"words_histogram"`
	Retriever          string         `json:"retriever"`
	// RetrievalScoreScale is "cosine" for a dense retriever (scores in [-1, 1]) or "unscaled"
	// (BM25); MinRetrievalScore is the threshold applied.
	RetrievalScoreScale string  `json:"retrieval_score_scale"`
	MinRetrievalScore   float64 `json:"min_retrieval_score"`
	// RetrievalScores is the distribution of the scores of all top-k candidates (before the
	// threshold), Top1RetrievalScores that of each query's best candidate.
	RetrievalScores     Distribution `json:"retrieval_score_distribution"`
	Top1RetrievalScores Distribution `json:"top1_retrieval_score_distribution"`
	// ThresholdSweep says how many candidate pairs each threshold step would remove.
	ThresholdSweep  []ThresholdStep `json:"retrieval_threshold_sweep"`
	ValidatorScores Distribution    `json:"validator_score_distribution"`
	Faults          map[string]int  `json:"faults_by_class"`
	Failures        []ToolFailure   `json:"failures,omitempty"`
}

// Distribution summarises a sample of scores.
type Distribution struct {
	N      int                `json:"n"`
	Min    float64            `json:"min"`
	Max    float64            `json:"max"`
	Mean   float64            `json:"mean"`
	Quant  map[string]float64 `json:"quantiles"`
	Counts map[string]int     `json:"histogram,omitempty"`
}

// Describe summarises xs: min, max, mean, the quantiles p5, p10, p25, p50, p75, p90, p95 (linear
// interpolation between order statistics, as numpy.quantile's default) and, when bins > 0, a
// histogram of bins equal-width bins over [lo, hi] (values outside are clamped into the end bins).
func Describe(xs []float64, bins int, lo, hi float64) Distribution {
	d := Distribution{N: len(xs), Quant: map[string]float64{}}
	if len(xs) == 0 {
		return d
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	d.Min, d.Max = s[0], s[len(s)-1]
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	d.Mean = sum / float64(len(s))
	for _, q := range []float64{0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95} {
		d.Quant["p"+strconv.Itoa(int(math.Round(q*100)))] = quantile(s, q)
	}
	if bins > 0 && hi > lo {
		d.Counts = map[string]int{}
		w := (hi - lo) / float64(bins)
		for _, x := range s {
			i := int((x - lo) / w)
			if i < 0 {
				i = 0
			}
			if i >= bins {
				i = bins - 1
			}
			a := lo + float64(i)*w
			d.Counts[fmt.Sprintf("[%.3g,%.3g)", a, a+w)]++
		}
	}
	return d
}

func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(math.Floor(pos))
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	f := pos - float64(i)
	return sorted[i]*(1-f) + sorted[i+1]*f
}

// RealCandidates retrieves the top-k tools of every query under r (which must index
// bench.DocsFromTools(tools)), in query order then rank order, with the retriever's scores
// (cosines for a dense retriever).
// A retriever that searches in batches (retrieve.Dense) embeds all queries in one call.
func RealCandidates(r retrieve.Retriever, queries []RealQuery, tools []catalog.Tool, k int) ([]RealPair, error) {
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i] = q.Text
	}
	r, err := prefetch(r, texts, k)
	if err != nil {
		return nil, err
	}
	var out []RealPair
	for _, q := range queries {
		cands, err := r.Search(q.Text, k)
		if err != nil {
			return nil, fmt.Errorf("retrieve for query %s: %w", q.ID, err)
		}
		for _, c := range cands {
			out = append(out, RealPair{Query: q, ToolID: c.ID, RetrievalScore: c.Score})
		}
	}
	return out, nil
}

// ValidatorMaxTokens is the token limit of a validator request: a score and little else.
const ValidatorMaxTokens = 12

func realKey(p RealPair) string { return "real/" + p.Query.ID + "/" + p.ToolID }

// ValidateReal asks gen for the functional-match score of every pair at or above the retrieval
// threshold that has no successful journal record, journaling each verdict.
func ValidateReal(ctx context.Context, gen Generator, pairs []RealPair, tools []catalog.Tool, cfg RealConfig, j *Journal, p Progress, now func() time.Time) error {
	if p == nil {
		p = nopProgress{}
	}
	byID := map[string]*catalog.Tool{}
	for i := range tools {
		byID[tools[i].ID] = &tools[i]
	}
	var jobs []job
	for _, pr := range pairs {
		if pr.RetrievalScore < cfg.MinRetrievalScore {
			continue
		}
		pr := pr
		t := byID[pr.ToolID]
		if t == nil {
			return fmt.Errorf("candidate tool %s is not in the catalog", pr.ToolID)
		}
		// The seed comes from the key without the settings tag, so a journal written before the
		// tag existed and a new one ask with the same seeds.
		seed := subSeed(cfg.Seed, realKey(pr))
		jobs = append(jobs, job{key: cfg.journalKey(pr, *t), do: func(ctx context.Context) Record {
			base := Record{ToolID: pr.ToolID, QueryID: pr.Query.ID, Query: pr.Query.Text, RetrievalScore: pr.RetrievalScore}
			msgs, stop := ValidatorMessages(cfg.PromptStyle, pr.Query.Text, *t)
			c, err := gen.Complete(ctx, Request{
				Messages: msgs, Seed: seed, Stop: stop, MaxTokens: ValidatorMaxTokens,
				Accept: func(text string) error { _, err := ParseScore(text); return err },
			})
			if err != nil {
				r := failureRecord(err, seed)
				r.ToolID, r.QueryID, r.Query, r.RetrievalScore = base.ToolID, base.QueryID, base.Query, base.RetrievalScore
				return r
			}
			score, _ := ParseScore(c.Text)
			base.OK, base.Raw, base.Score, base.Attempts, base.Faults, base.Seed = true, c.Text, score, c.Attempts, c.Faults, c.Seed
			return base
		}})
	}
	if cfg.AdoptLegacy {
		var legacy [][]string
		for _, pr := range pairs {
			if pr.RetrievalScore >= cfg.MinRetrievalScore {
				legacy = append(legacy, cfg.legacyKeys(pr))
			}
		}
		if err := adoptLegacy(j, jobs, func(i int) []string { return legacy[i] }); err != nil {
			return err
		}
	}
	return runJobs(ctx, j, jobs, cfg.Concurrency, "real: validate", p, now)
}

// RealResult is a built EcoAgent-Real.
type RealResult struct {
	Bench *bench.Bench
	Stats RealStats
}

// AssembleReal builds EcoAgent-Real from the candidates and the journal: pairs below the
// retrieval threshold are dropped, the rest keep their validator verdict, pairs scoring at least
// KeepScore are kept, near-duplicate queries are removed (first in input order wins), and the
// queries are split by text.
func AssembleReal(tools []catalog.Tool, queries []RealQuery, pairs []RealPair, j *Journal, retrieverName string, cfg RealConfig) (*RealResult, error) {
	rep := ReportRetrieval(len(queries), pairs, retrieverName, cfg.MinRetrievalScore)
	st := RealStats{InputQueries: len(queries), CandidatePairs: len(pairs), Retriever: retrieverName,
		RetrievalScoreScale: rep.Scale, MinRetrievalScore: cfg.MinRetrievalScore,
		RetrievalScores: rep.Scores, Top1RetrievalScores: rep.Top1Scores, ThresholdSweep: rep.Sweep,
		QueriesPerSplit: map[string]int{}, WordsHistogram: map[string]int{}, Faults: map[string]int{}}
	var validatorScores []float64
	keptTools := map[string][]string{} // query id -> kept tool ids, rank order
	byID := make(map[string]*catalog.Tool, len(tools))
	for i := range tools {
		byID[tools[i].ID] = &tools[i]
	}
	for _, p := range pairs {
		if p.RetrievalScore < cfg.MinRetrievalScore {
			st.DroppedLowScore++
			continue
		}
		t := byID[p.ToolID]
		if t == nil {
			return nil, fmt.Errorf("candidate tool %s is not in the catalog", p.ToolID)
		}
		key := cfg.journalKey(p, *t)
		rec, ok := j.Get(key)
		if ok {
			for _, f := range rec.Faults {
				st.Faults[f]++
			}
		}
		if !ok || !rec.OK {
			st.ValidationFailed++
			f := ToolFailure{Key: key, Error: "no journal record (run interrupted?)"}
			if ok {
				f.Faults, f.Error = rec.Faults, rec.Error
			}
			st.Failures = append(st.Failures, f)
			continue
		}
		st.ValidatedPairs++
		validatorScores = append(validatorScores, rec.Score)
		if rec.Score < cfg.KeepScore {
			st.DroppedByValidator++
			continue
		}
		st.KeptPairsRaw++
		keptTools[p.Query.ID] = append(keptTools[p.Query.ID], p.ToolID)
	}
	st.ValidatorScores = Describe(validatorScores, 10, 0, 1)
	dd, err := NewDeduper(cfg.DedupeThreshold)
	if err != nil {
		return nil, err
	}
	var keptQ []RealQuery
	for _, q := range queries {
		if len(keptTools[q.ID]) == 0 {
			continue
		}
		if keep, _ := dd.Add(q.Text); !keep {
			st.DroppedNearDup++
			continue
		}
		keptQ = append(keptQ, q)
	}
	texts := make([]string, len(keptQ))
	for i, q := range keptQ {
		texts[i] = q.Text
	}
	assign, err := SplitByText(texts, cfg.SplitNames, cfg.SplitFractions, cfg.SplitSeed)
	if err != nil {
		return nil, err
	}
	b := &bench.Bench{Corpus: bench.DocsFromTools(tools), Splits: map[string]bench.Qrels{}, Tools: tools}
	for _, n := range cfg.SplitNames {
		b.Splits[n] = bench.Qrels{}
	}
	for _, q := range keptQ {
		split := assign[q.Text]
		b.Queries = append(b.Queries, bench.Query{ID: q.ID, Text: q.Text, Metadata: map[string]any{"group": q.Group, "split": split}})
		rel := map[string]int{}
		for _, id := range keptTools[q.ID] {
			rel[id] = 1
			st.VerifiedPairs++
		}
		b.Splits[split][q.ID] = rel
		st.QueriesPerSplit[split]++
		st.WordsHistogram[wordsBin(WordCount(q.Text))]++
	}
	st.Queries = len(keptQ)
	return &RealResult{Bench: b, Stats: st}, nil
}

func minOf(xs []float64) float64 {
	m := math.Inf(1)
	for _, x := range xs {
		m = math.Min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
