package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// tableEncoder is a fake encode.Encoder: every text it may see has a hand-chosen unit vector,
// so every cosine below is a product of one-decimal numbers, computed by hand.
type tableEncoder map[string][]float32

func (e tableEncoder) Name() string { return "table" }
func (e tableEncoder) Dim() int     { return 3 }
func (e tableEncoder) lookup(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v, ok := e[s]
		if !ok {
			return nil, fmt.Errorf("table encoder: no vector for %q", s)
		}
		out[i] = v
	}
	return out, nil
}
func (e tableEncoder) EncodeQueries(texts []string) ([][]float32, error) { return e.lookup(texts) }
func (e tableEncoder) EncodeDocs(texts []string) ([][]float32, error)    { return e.lookup(texts) }

// Hand-chosen geometry. Tools (unit vectors in R^3):
//
//	alpha (1, 0, 0)   bravo (.8, .6, 0)   charlie (.6, 0, .8)   delta (0, 1, 0)   echo (0, .6, .8)
//
// Queries and their cosines with alpha, bravo, charlie, delta, echo:
//
//	qOne   (.6, .8, 0): .6, .96, .36, .8, .48   -> bravo .96, delta .8, alpha .6, echo .48, charlie .36
//	qTwo   (0, 0, 1):   0,  0,   .8,  0,  .8    -> charlie .8, echo .8 (tie: corpus order), alpha 0, ...
//	qThree (.6, 0, .8): .6, .48, 1,   0,  .64   -> charlie 1, echo .64, alpha .6, bravo .48, delta 0
//
// qOne's text names charlie, which cosine ranks last: the order is the encoder's, not the words'.
const (
	qOne   = "please ask charlie zulu quickly now"
	qTwo   = "what does the second query want"
	qThree = "a third query about something else"
)

func denseFixture(t *testing.T) ([]catalog.Tool, *retrieve.Dense) {
	t.Helper()
	tools := []catalog.Tool{
		{ID: "t/alpha", Name: "alpha", Description: "alpha yankee service", Platform: "p"},
		{ID: "t/bravo", Name: "bravo", Description: "bravo zulu service", Platform: "p"},
		{ID: "t/charlie", Name: "charlie", Description: "charlie xray service", Platform: "p"},
		{ID: "t/delta", Name: "delta", Description: "delta whiskey service", Platform: "p"},
		{ID: "t/echo", Name: "echo", Description: "echo victor service", Platform: "p"},
	}
	docVecs := [][]float32{{1, 0, 0}, {.8, .6, 0}, {.6, 0, .8}, {0, 1, 0}, {0, .6, .8}}
	enc := tableEncoder{qOne: {.6, .8, 0}, qTwo: {0, 0, 1}, qThree: {.6, 0, .8}}
	docs := bench.DocsFromTools(tools)
	for i, d := range docs {
		enc[retrieve.DocText(d)] = docVecs[i]
	}
	r, err := retrieve.NewDense(enc, docs, retrieve.DenseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tools, r
}

type wantCand struct {
	id    string
	score float64
}

func checkCands(t *testing.T, what string, got []wantCand, want []wantCand) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
	for i := range want {
		if got[i].id != want[i].id || math.Abs(got[i].score-want[i].score) > 1e-6 {
			t.Fatalf("%s: got %v, want %v", what, got, want)
		}
	}
}

// TestDenseHardNegativesFollowCosine mines hard negatives with a dense retriever directly and
// through AssembleSyn (which retrieves all queries in one batch).
func TestDenseHardNegativesFollowCosine(t *testing.T) {
	tools, r := denseFixture(t)
	ids := []string{"t/alpha", "t/bravo", "t/charlie", "t/delta", "t/echo"}
	cases := []struct {
		positive string
		want     []Negative
	}{
		// bravo (.96) is the positive: the next best are delta (.8, rank 2) and alpha (.6, rank 3).
		{"t/bravo", []Negative{{ToolID: "t/delta", Kind: "hard", Rank: 2, Score: .8}, {ToolID: "t/alpha", Kind: "hard", Rank: 3, Score: .6}}},
		// delta is the positive: bravo (.96, rank 1), then alpha (.6, rank 3).
		{"t/delta", []Negative{{ToolID: "t/bravo", Kind: "hard", Rank: 1, Score: .96}, {ToolID: "t/alpha", Kind: "hard", Rank: 3, Score: .6}}},
		// charlie, named by the query's words, is last by cosine: bravo and delta are the hard ones.
		{"t/charlie", []Negative{{ToolID: "t/bravo", Kind: "hard", Rank: 1, Score: .96}, {ToolID: "t/delta", Kind: "hard", Rank: 2, Score: .8}}},
	}
	for _, c := range cases {
		got, err := MineNegatives(r, qOne, map[string]bool{c.positive: true}, ids, NegativeConfig{Hard: 2}, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("positive %s: got %+v, want %+v", c.positive, got, c.want)
		}
		for i, w := range c.want {
			g := got[i]
			if g.ToolID != w.ToolID || g.Kind != w.Kind || g.Rank != w.Rank || math.Abs(g.Score-w.Score) > 1e-6 {
				t.Fatalf("positive %s: negative %d = %+v, want %+v", c.positive, i, g, w)
			}
		}
	}

	// Through AssembleSyn: bravo's generated query is qOne (6 words, kept), so its hard
	// negatives are delta then alpha; the other tools answered nothing.
	j, err := OpenJournal(filepath.Join(t.TempDir(), "syn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	cfg := DefaultSynConfig()
	cfg.Negatives = NegativeConfig{Hard: 2, Random: 0}
	for _, tl := range tools {
		raw := ""
		if tl.ID == "t/bravo" {
			raw = "1. " + qOne + "\n"
		}
		if err := j.Append(Record{Key: SynKey(cfg.QueriesPerTool, tl.ID), OK: true, Raw: raw}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := AssembleSyn(tools, j, r, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Negatives) != 1 || res.Negatives[0].Positive != "t/bravo" {
		t.Fatalf("negatives %+v, want one record for t/bravo", res.Negatives)
	}
	var got []wantCand
	for _, n := range res.Negatives[0].Negatives {
		got = append(got, wantCand{n.ToolID, n.Score})
	}
	checkCands(t, "AssembleSyn hard negatives", got, []wantCand{{"t/delta", .8}, {"t/alpha", .6}})
	if res.Stats.Retriever != "dense:table" || res.Stats.HardNegativeScores.N != 2 {
		t.Fatalf("stats: retriever %q, %d hard-negative scores", res.Stats.Retriever, res.Stats.HardNegativeScores.N)
	}
}

// TestDenseRealCandidatesAndThreshold retrieves the top 3 of three queries by cosine, applies the
// paper's 0.7 (the default for a dense retriever) and checks the counts, the distribution and the
// threshold sweep against the hand-computed cosines above.
func TestDenseRealCandidatesAndThreshold(t *testing.T) {
	tools, r := denseFixture(t)
	queries := []RealQuery{{ID: "g-1", Group: "g", Text: qOne}, {ID: "g-2", Group: "g", Text: qTwo}, {ID: "g-3", Group: "g", Text: qThree}}
	pairs, err := RealCandidates(r, queries, tools, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []wantCand
	for _, p := range pairs {
		got = append(got, wantCand{p.Query.ID + " " + p.ToolID, p.RetrievalScore})
	}
	checkCands(t, "top-3 candidates", got, []wantCand{
		{"g-1 t/bravo", .96}, {"g-1 t/delta", .8}, {"g-1 t/alpha", .6},
		{"g-2 t/charlie", .8}, {"g-2 t/echo", .8}, {"g-2 t/alpha", 0},
		{"g-3 t/charlie", 1}, {"g-3 t/echo", .64}, {"g-3 t/alpha", .6},
	})

	if DefaultMinRetrievalScore("BM25", PaperMinCosine) != 0 || DefaultMinRetrievalScore(r.Name(), PaperMinCosine) != 0.7 {
		t.Fatal("default thresholds: want 0 for BM25 and 0.7 for a dense retriever")
	}
	cfg := DefaultRealConfig()
	cfg.MinRetrievalScore = DefaultMinRetrievalScore(r.Name(), PaperMinCosine)
	j, err := OpenJournal(filepath.Join(t.TempDir(), "real.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	// The validator accepts every pair it is asked about: only the threshold drops pairs.
	for _, p := range pairs {
		if p.RetrievalScore >= cfg.MinRetrievalScore {
			j.Append(Record{Key: realKey(p), OK: true, Score: 1})
		}
	}
	res, err := AssembleReal(tools, queries, pairs, j, r.Name(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats
	// Below 0.7: g-1 alpha (.6), g-2 alpha (0), g-3 echo (.64), g-3 alpha (.6).
	if st.CandidatePairs != 9 || st.DroppedLowScore != 4 || st.ValidatedPairs != 5 || st.VerifiedPairs != 5 || st.Queries != 3 {
		t.Fatalf("stats %+v", st)
	}
	kept := map[string][]string{}
	for _, split := range res.Bench.Splits {
		for qid, rel := range split {
			for id := range rel {
				kept[qid] = append(kept[qid], id)
			}
		}
	}
	for q, want := range map[string][]string{"g-1": {"t/bravo", "t/delta"}, "g-2": {"t/charlie", "t/echo"}, "g-3": {"t/charlie"}} {
		g := kept[q]
		if len(g) == 2 && g[0] > g[1] {
			g[0], g[1] = g[1], g[0]
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("query %s keeps %v, want %v", q, g, want)
		}
	}
	if st.RetrievalScoreScale != "cosine" || st.MinRetrievalScore != 0.7 {
		t.Fatalf("scale %q, threshold %g", st.RetrievalScoreScale, st.MinRetrievalScore)
	}
	// Sorted scores: 0, .6, .6, .64, .8, .8, .8, .96, 1. Median .8; p25 = .6 + 0/… = s[2] = .6.
	d := st.RetrievalScores
	if d.N != 9 || math.Abs(d.Quant["p50"]-.8) > 1e-6 || math.Abs(d.Quant["p25"]-.6) > 1e-6 || math.Abs(d.Max-1) > 1e-6 {
		t.Fatalf("distribution %+v", d)
	}
	wantHist := map[string]int{"[0,0.05)": 1, "[0.6,0.65)": 3, "[0.8,0.85)": 3, "[0.95,1)": 2}
	if !reflect.DeepEqual(d.Counts, wantHist) {
		t.Fatalf("histogram %v, want %v", d.Counts, wantHist)
	}
	if t1 := st.Top1RetrievalScores; t1.N != 3 || math.Abs(t1.Min-.8) > 1e-6 || math.Abs(t1.Max-1) > 1e-6 {
		t.Fatalf("top-1 distribution %+v, want 3 scores from .8 to 1", t1)
	}
	// The reported sweep holds the configured 0.7: 4 pairs removed, all three queries left.
	found := false
	for _, s := range st.ThresholdSweep {
		if math.Abs(s.Threshold-0.7) < 1e-9 {
			found = true
			if s.Removed != 4 || s.Kept != 5 || s.QueriesLeft != 3 {
				t.Fatalf("sweep at 0.7: %+v", s)
			}
		}
	}
	if !found || len(st.ThresholdSweep) != 10 {
		t.Fatalf("sweep %+v: want the 10 steps 0.50..0.95", st.ThresholdSweep)
	}
	// Thresholds between the scores, by hand: below .5 only the 0; below .62 also both .6;
	// below .7 also .64; below .9 also the three .8 (g-2 has nothing left).
	steps := SweepThresholds(pairs, []float64{0.5, 0.62, 0.7, 0.9})
	want := []ThresholdStep{
		{Threshold: 0.5, Removed: 1, RemovedByStep: 1, Kept: 8, QueriesLeft: 3},
		{Threshold: 0.62, Removed: 3, RemovedByStep: 2, Kept: 6, QueriesLeft: 3},
		{Threshold: 0.7, Removed: 4, RemovedByStep: 1, Kept: 5, QueriesLeft: 3},
		{Threshold: 0.9, Removed: 7, RemovedByStep: 3, Kept: 2, QueriesLeft: 2},
	}
	if !reflect.DeepEqual(steps, want) {
		t.Fatalf("sweep %+v, want %+v", steps, want)
	}
}

func TestSweepGrid(t *testing.T) {
	cases := []struct {
		name       string
		cosine     bool
		scores     []float64
		configured float64
		want       []float64
	}{
		{"cosine, configured on the grid", true, nil, 0.7, []float64{.5, .55, .6, .65, .7, .75, .8, .85, .9, .95}},
		{"cosine, configured between", true, nil, 0.72, []float64{.5, .55, .6, .65, .7, .72, .75, .8, .85, .9, .95}},
		{"cosine, configured below", true, nil, 0.3, []float64{.3, .5, .55, .6, .65, .7, .75, .8, .85, .9, .95}},
		{"cosine, configured above", true, nil, 0.97, []float64{.5, .55, .6, .65, .7, .75, .8, .85, .9, .95, .97}},
		{"BM25: tenths of the largest score", false, []float64{3, 8, 1}, 0, []float64{0, .8, 1.6, 2.4, 3.2, 4, 4.8, 5.6, 6.4, 7.2}},
		{"BM25, no scores", false, nil, 0, []float64{0}},
	}
	for _, c := range cases {
		got := SweepGrid(c.cosine, c.scores, c.configured)
		if len(got) != len(c.want) {
			t.Fatalf("%s: got %v, want %v", c.name, got, c.want)
		}
		for i := range got {
			if math.Abs(got[i]-c.want[i]) > 1e-9 {
				t.Fatalf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	}
}
