package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

func TestJaccardHandComputed(t *testing.T) {
	cases := []struct {
		a, b string
		want float64
	}{
		// {what,is,the,weather,in,paris} vs {what,is,the,weather,in,rome}: 5 shared / 7 in union.
		{"What is the weather in Paris?", "what is the weather in Rome", 5.0 / 7},
		// Punctuation and case do not matter; repeated words count once.
		{"Send, send an e-mail!", "send an E mail", 1},
		{"alpha beta", "gamma delta", 0},
		{"", "", 1},
	}
	for _, c := range cases {
		if got := Jaccard(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("Jaccard(%q, %q) = %g, want %g", c.a, c.b, got, c.want)
		}
	}
}

func TestDeduperHandChecked(t *testing.T) {
	in := []string{
		"book a flight from boston to denver on friday",    // kept
		"book a flight from boston to denver on friday!",   // J = 1 with #0: dropped
		"book a cheap flight from boston to denver friday", // {book,a,cheap,flight,from,boston,to,denver,friday} vs #0's 9 words: 8 shared / 10 = 0.8 > 0.7: dropped
		"book a flight from boston to chicago on monday",   // 7 shared / 11 = 0.636: kept
		"what is the weather in paris",                     // kept
		"what is the weather in rome",                      // 5/7 = 0.714 > 0.7: dropped
		"what is the weather like in rome today",           // vs #4: 5 shared / 9 = 0.556: kept
	}
	wantKept := []bool{true, false, false, true, true, false, true}
	d, err := NewDeduper(0.7)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range in {
		kept, _ := d.Add(s)
		if kept != wantKept[i] {
			t.Errorf("text %d %q: kept = %v, want %v", i, s, kept, wantKept[i])
		}
	}
}

// TestDeduperMatchesBruteForce checks the prefix-filtered deduper against the quadratic
// definition on random texts over a small vocabulary (many near-duplicates).
func TestDeduperMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for _, th := range []float64{0.5, 0.7, 0.9} {
		d, _ := NewDeduper(th)
		var kept []string
		for n := 0; n < 400; n++ {
			var words []string
			for k := 0; k < 1+rng.IntN(7); k++ {
				words = append(words, vocab[rng.IntN(len(vocab))])
			}
			text := fmt.Sprint(words)
			want := true
			for _, k := range kept {
				if Jaccard(text, k) > th {
					want = false
					break
				}
			}
			got, _ := d.Add(text)
			if got != want {
				t.Fatalf("threshold %g, text %q: kept = %v, brute force says %v", th, text, got, want)
			}
			if want {
				kept = append(kept, text)
			}
		}
	}
}

func TestNewDeduperRejectsBadThreshold(t *testing.T) {
	for _, th := range []float64{0, 1, -0.1, 1.5} {
		if _, err := NewDeduper(th); err == nil {
			t.Errorf("NewDeduper(%g) accepted", th)
		}
	}
}

func negTools() []catalog.Tool {
	return []catalog.Tool{
		{ID: "t/weather", Name: "weather", Description: "current weather forecast for a city", Platform: "n8n"},
		{ID: "t/weather2", Name: "weather api", Description: "weather conditions for a location", Platform: "langchain"},
		{ID: "t/mail", Name: "gmail", Description: "send an email message", Platform: "n8n"},
		{ID: "t/stock", Name: "stocks", Description: "stock price for a ticker", Platform: "llamaindex"},
		{ID: "t/translate", Name: "translate", Description: "translate text between languages", Platform: "n8n"},
	}
}

func TestMineNegatives(t *testing.T) {
	tools := negTools()
	r := retrieve.NewBM25(bench.DocsFromTools(tools), retrieve.DefaultBM25Params())
	ids := []string{"t/weather", "t/weather2", "t/mail", "t/stock", "t/translate"}
	// The query shares "weather" with both weather tools and nothing else; t/weather is the
	// positive, so the hard negative must be t/weather2 (the only other tool BM25 scores > 0).
	negs, err := MineNegatives(r, "weather in Oslo tomorrow", map[string]bool{"t/weather": true}, ids,
		NegativeConfig{Hard: 1, Random: 2}, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	if len(negs) != 3 {
		t.Fatalf("got %d negatives, want 3: %+v", len(negs), negs)
	}
	if negs[0].Kind != "hard" || negs[0].ToolID != "t/weather2" || negs[0].Rank != 2 {
		t.Fatalf("hard negative = %+v, want t/weather2 at rank 2", negs[0])
	}
	seen := map[string]bool{"t/weather": true, "t/weather2": true}
	for _, n := range negs[1:] {
		if n.Kind != "random" {
			t.Fatalf("want random, got %+v", n)
		}
		if seen[n.ToolID] {
			t.Fatalf("random negative %s is the positive or repeats a chosen negative", n.ToolID)
		}
		seen[n.ToolID] = true
	}
	// With every other tool a positive, no negative can be found.
	all := map[string]bool{}
	for _, id := range ids {
		all[id] = true
	}
	negs, err = MineNegatives(r, "weather", all, ids, NegativeConfig{Hard: 1, Random: 1}, rand.New(rand.NewPCG(3, 4)))
	if err != nil || len(negs) != 0 {
		t.Fatalf("all positive: got %+v, %v; want none", negs, err)
	}
}

func TestSplitByText(t *testing.T) {
	texts := []string{"q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9", "q10", "q1"}
	a, err := SplitByText(texts, []string{"train", "dev", "test"}, []float64{0.8, 0.1, 0.1}, 42)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range a {
		count[s]++
	}
	// 10 distinct texts: round(8) = 8 train, round(9) - 8 = 1 dev, the remaining 1 test.
	if len(a) != 10 || count["train"] != 8 || count["dev"] != 1 || count["test"] != 1 {
		t.Fatalf("split sizes %v over %d texts, want train 8, dev 1, test 1 over 10", count, len(a))
	}
	// The assignment depends on the set of texts and the seed, not on input order.
	rev := append([]string(nil), texts...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	b, _ := SplitByText(rev, []string{"train", "dev", "test"}, []float64{0.8, 0.1, 0.1}, 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("assignment changed with input order")
	}
	c, _ := SplitByText(texts, []string{"train", "dev", "test"}, []float64{0.8, 0.1, 0.1}, 43)
	if reflect.DeepEqual(a, c) {
		t.Fatalf("another seed gave the same assignment (possible but unlikely for 10 texts)")
	}
	if _, err := SplitByText(texts, []string{"a"}, []float64{0.5, 0.5}, 1); err == nil {
		t.Fatal("mismatched names and fractions accepted")
	}
}

func TestSampleTools(t *testing.T) {
	tools := negTools()
	got := SampleTools(tools, 0, []string{"n8n"}, 0, 1)
	if len(got) != 3 || got[0].ID != "t/weather" || got[1].ID != "t/mail" || got[2].ID != "t/translate" {
		t.Fatalf("platform filter: %v", got)
	}
	got = SampleTools(tools, 0, nil, 1, 1)
	if len(got) != 3 { // one each of n8n, langchain, llamaindex
		t.Fatalf("per-platform 1: got %d tools, want 3", len(got))
	}
	plat := map[string]bool{}
	for _, tl := range got {
		if plat[tl.Platform] {
			t.Fatalf("two tools of %s", tl.Platform)
		}
		plat[tl.Platform] = true
	}
	a := SampleTools(tools, 2, nil, 0, 9)
	b := SampleTools(tools, 2, nil, 0, 9)
	if len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Fatalf("sampling 2 with a seed: %v then %v", a, b)
	}
}

func TestDescribeQuantiles(t *testing.T) {
	// numpy.quantile([1,2,3,4,5], [.1,.25,.5,.75,.9]) = [1.4, 2, 3, 4, 4.6]
	d := Describe([]float64{5, 1, 4, 2, 3}, 2, 1, 5)
	want := map[string]float64{"p10": 1.4, "p25": 2, "p50": 3, "p75": 4, "p90": 4.6}
	for k, v := range want {
		if math.Abs(d.Quant[k]-v) > 1e-12 {
			t.Errorf("%s = %g, want %g", k, d.Quant[k], v)
		}
	}
	if d.Min != 1 || d.Max != 5 || d.Mean != 3 || d.N != 5 {
		t.Errorf("min/max/mean/n = %g/%g/%g/%d", d.Min, d.Max, d.Mean, d.N)
	}
	// Bins [1,3) and [3,5]: 1,2 | 3,4,5.
	if d.Counts["[1,3)"] != 2 || d.Counts["[3,5)"] != 3 {
		t.Errorf("histogram %v", d.Counts)
	}
}
