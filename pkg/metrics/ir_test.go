package metrics

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

func TestIRHandComputed(t *testing.T) {
	rel := Judgments{"a": 1, "b": 2, "c": 0, "z": 3}
	// Relevant: a (1), b (2), z (3, never ranked). Ideal gains 3, 2, 1.
	ranking := []string{"x", "b", "b", "c", "a", "y"}
	// Deduplicated: x b c a y -> relevant at ranks 2 (b) and 4 (a).
	ideal3 := 3 + 2/math.Log2(3) + 1/math.Log2(4)
	cases := []struct {
		m    Measure
		want float64
	}{
		{Measure{RR, 0}, 0.5},
		{Measure{RR, 1}, 0},
		{Measure{RR, 2}, 0.5},
		{Measure{Recall, 1}, 0},
		{Measure{Recall, 2}, 1.0 / 3},
		{Measure{Recall, 3}, 1.0 / 3}, // the duplicate b does not take rank 3
		{Measure{Recall, 4}, 2.0 / 3},
		{Measure{Recall, 100}, 2.0 / 3},
		{Measure{Hit, 1}, 0},
		{Measure{Hit, 2}, 1},
		{Measure{NDCG, 1}, 0},
		{Measure{NDCG, 2}, (2 / math.Log2(3)) / (3 + 2/math.Log2(3))},
		{Measure{NDCG, 4}, (2/math.Log2(3) + 1/math.Log2(5)) / ideal3},
		// AP: relevant at ranks 2 and 4 of three relevant: (1/2 + 2/4) / 3.
		{Measure{AP, 0}, (0.5 + 0.5) / 3},
		{Measure{AP, 3}, 0.5 / 3},
		// P@k divides by k even past the end of the ranking (5 distinct documents).
		{Measure{Precision, 1}, 0},
		{Measure{Precision, 2}, 0.5},
		{Measure{Precision, 4}, 0.5},
		{Measure{Precision, 10}, 0.2},
	}
	var all []Measure
	for _, c := range cases {
		if got := c.m.Eval(ranking, rel); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%v = %v, want %v", c.m, got, c.want)
		}
		all = append(all, c.m)
	}
	for i, got := range EvalAll(all, ranking, rel) {
		if math.Abs(got-cases[i].want) > 1e-15 {
			t.Errorf("EvalAll %v = %v, want %v", cases[i].m, got, cases[i].want)
		}
	}
	// No relevant document, or an empty ranking: every measure is 0.
	for _, m := range []Measure{{RR, 0}, {Recall, 5}, {Hit, 5}, {NDCG, 10}, {AP, 0}, {Precision, 5}} {
		if got := m.Eval(ranking, Judgments{"a": 0}); got != 0 {
			t.Errorf("%v without relevant documents = %v, want 0", m, got)
		}
		if got := m.Eval(nil, rel); got != 0 {
			t.Errorf("%v of an empty ranking = %v, want 0", m, got)
		}
	}
}

func TestTrecOrder(t *testing.T) {
	run := []ScoredDoc{{"d1", 0.5}, {"d10", 0.9}, {"d2", 0.5}, {"d10", 0.1}, {"d3", 0.7}, {"D9", 0.5}}
	// Score descending; ties (0.5) by id descending byte-wise: d2 > d1 > D9; d10 once, at 0.9.
	want := []string{"d10", "d3", "d2", "d1", "D9"}
	if got := TrecOrder(run); !reflect.DeepEqual(got, want) {
		t.Errorf("TrecOrder = %v, want %v", got, want)
	}
}

// TestTrecOrderFloat32 checks that scores equal in float32 tie, as in trec_eval, whose run
// scores are C floats: 1+1e-12 and 1 tie (ids descending), 1+1e-6 does not.
func TestTrecOrderFloat32(t *testing.T) {
	run := []ScoredDoc{{"a", 1 + 1e-12}, {"b", 1}, {"c", 1 + 1e-6}}
	if got, want := TrecOrder(run), []string{"c", "b", "a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("TrecOrder = %v, want %v", got, want)
	}
	for in, want := range map[float64]string{1 + 1e-12: "1", 0.1: "0.1", 1.0 / 3: "0.33333334", -2.5e-9: "-2.5e-09"} {
		if got := TrecScore(in); got != want {
			t.Errorf("TrecScore(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestParseMeasure(t *testing.T) {
	for in, want := range map[string]Measure{"MRR": {RR, 0}, "mrr@10": {RR, 10}, "Recall@5": {Recall, 5}, "R@1": {Recall, 1}, "hit@5": {Hit, 5}, "nDCG@10": {NDCG, 10},
		"RR": {RR, 0}, "Success@5": {Hit, 5}, "MAP": {AP, 0}, "AP": {AP, 0}, "AP@10": {AP, 10}, "P@5": {Precision, 5}} {
		got, err := ParseMeasure(in)
		if err != nil || got != want {
			t.Errorf("ParseMeasure(%q) = %v, %v; want %v", in, got, err, want)
		}
		if back, _ := ParseMeasure(got.String()); back != got {
			t.Errorf("ParseMeasure(%q.String()) = %v", got, back)
		}
		if back, _ := ParseMeasure(got.IRMeasuresName()); back != got {
			t.Errorf("ParseMeasure(%q.IRMeasuresName()) = %v", got, back)
		}
	}
	for m, want := range map[Measure]string{{RR, 0}: "RR", {Recall, 5}: "R@5", {NDCG, 10}: "nDCG@10", {AP, 0}: "AP", {Precision, 5}: "P@5", {Hit, 1}: "Success@1"} {
		if got := m.IRMeasuresName(); got != want {
			t.Errorf("%v.IRMeasuresName() = %q, want %q", m, got, want)
		}
	}
	for _, bad := range []string{"", "P", "Recall", "nDCG@0", "Hit@x", "P@0"} {
		if _, err := ParseMeasure(bad); err == nil {
			t.Errorf("ParseMeasure(%q) accepted", bad)
		}
	}
}

// randomCase builds one random query: judgments (possibly none relevant) and a scored run with
// ties, duplicates and sometimes no entries at all.
func randomCase(rng *rand.Rand) (Judgments, []ScoredDoc) {
	pool := 5 + rng.IntN(40)
	doc := func() string { return fmt.Sprintf("doc%d", rng.IntN(pool)) }
	rel := Judgments{}
	for range rng.IntN(8) {
		rel[doc()] = rng.IntN(4) // grades 0..3; 0 is judged non-relevant
	}
	var run []ScoredDoc
	n := rng.IntN(30)
	if rng.IntN(10) == 0 {
		n = 0
	}
	for range n {
		var s float64
		switch rng.IntN(3) {
		case 0:
			s = float64(rng.IntN(5)) / 4 // coarse scores: many ties
		case 1:
			s = rng.Float64()
		default:
			s = 0.5 + float64(rng.IntN(3))*1e-12 // distinct in float64, tied in float32 (trec_eval's)
		}
		run = append(run, ScoredDoc{ID: doc(), Score: s})
	}
	return rel, run
}

// TestIRMatchesPytrecEval compares every measure with pytrec_eval (trec_eval 9) to 1e-6 on
// 4,000 random queries with tied scores, duplicate documents, empty runs and queries without a
// relevant document.
func TestIRMatchesPytrecEval(t *testing.T) {
	python := testassets.Python(t)
	rng := rand.New(rand.NewPCG(2024, 11))
	const nq = 4000
	qrels := map[string]Judgments{}
	runs := map[string][]ScoredDoc{}
	refRun := map[string]map[string]float64{}
	noRelevant, emptyRuns := 0, 0
	for i := range nq {
		q := fmt.Sprintf("q%d", i)
		rel, run := randomCase(rng)
		if len(rel) == 0 {
			rel["unjudged-placeholder"] = 0 // a qrels entry without any relevant document
		}
		if numRelevant(rel) == 0 {
			noRelevant++
		}
		if len(run) == 0 {
			emptyRuns++
		}
		qrels[q], runs[q] = rel, run
		// pytrec_eval takes a dict: a duplicated document keeps its highest score.
		best := map[string]float64{}
		for _, d := range run {
			if s, ok := best[d.ID]; !ok || d.Score > s {
				best[d.ID] = d.Score
			}
		}
		refRun[q] = best
	}
	if noRelevant < 50 || emptyRuns < 50 {
		t.Fatalf("random cases too narrow: %d without relevant docs, %d empty runs", noRelevant, emptyRuns)
	}
	measures := []Measure{{RR, 0}, {AP, 0}}
	for _, k := range []int{1, 3, 5, 10} {
		measures = append(measures, Measure{Recall, k}, Measure{Hit, k}, Measure{NDCG, k}, Measure{AP, k}, Measure{Precision, k})
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	raw, err := json.Marshal(map[string]any{
		"qrels": qrels, "run": refRun,
		"measures": []string{"recip_rank", "map", "recall.1,3,5,10", "success.1,3,5,10", "ndcg_cut.1,3,5,10", "map_cut.1,3,5,10", "P.1,3,5,10"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(python, filepath.Join("testdata", "trec_ref.py"), in, out).CombinedOutput(); err != nil {
		t.Fatalf("trec_ref.py: %v\n%s", err, msg)
	}
	raw, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]map[string]float64
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	sums := make([]float64, len(measures))
	refSums := make([]float64, len(measures))
	for i := range nq {
		q := fmt.Sprintf("q%d", i)
		ranking := TrecOrder(runs[q])
		want, evaluated := ref[q]
		// EvalAll must agree with Eval, and both must drop repeats: every id given twice in a
		// row (as a run with duplicates ranks them) scores as the ranking itself.
		all := EvalAll(measures, ranking, qrels[q])
		var doubled []string
		for _, id := range ranking {
			doubled = append(doubled, id, id)
		}
		allDoubled := EvalAll(measures, doubled, qrels[q])
		for j, m := range measures {
			got := m.Eval(ranking, qrels[q])
			if all[j] != got || allDoubled[j] != got || m.Eval(doubled, qrels[q]) != got {
				t.Fatalf("%s %v: EvalAll %v, Eval %v; with every id twice EvalAll %v, Eval %v", q, m, all[j], got, allDoubled[j], m.Eval(doubled, qrels[q]))
			}
			sums[j] += got
			w := 0.0 // a query pytrec_eval skips (empty run) counts 0, as with trec_eval -c
			if evaluated {
				v, ok := want[m.TrecEvalName()]
				if !ok {
					t.Fatalf("pytrec_eval returned no %s", m.TrecEvalName())
				}
				w = v
			} else if len(runs[q]) > 0 {
				t.Fatalf("%s: pytrec_eval skipped a query with a non-empty run", q)
			}
			refSums[j] += w
			if math.Abs(got-w) > 1e-6 {
				t.Fatalf("%s %v = %v, pytrec_eval %s = %v (run %v, qrels %v)", q, m, got, m.TrecEvalName(), w, runs[q], qrels[q])
			}
		}
	}
	for j, m := range measures {
		if math.Abs(sums[j]-refSums[j])/nq > 1e-6 {
			t.Errorf("mean %v = %v, pytrec_eval %v", m, sums[j]/nq, refSums[j]/nq)
		}
	}
	t.Logf("%d queries (%d without a relevant document, %d empty runs), %d measures each", nq, noRelevant, emptyRuns, len(measures))
}

// The names a measure goes by in rated's tables, ir_measures and trec_eval.
func ExampleMeasure_IRMeasuresName() {
	for _, s := range []string{"MRR", "Recall@5", "nDCG@10", "MAP", "P@5", "Hit@1"} {
		m, _ := ParseMeasure(s)
		fmt.Println(m, m.IRMeasuresName(), m.TrecEvalName())
	}
	// Output:
	// MRR RR recip_rank
	// Recall@5 R@5 recall_5
	// nDCG@10 nDCG@10 ndcg_cut_10
	// MAP AP map
	// P@5 P@5 P_5
	// Hit@1 Success@1 success_1
}
