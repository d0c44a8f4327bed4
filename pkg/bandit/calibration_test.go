package bandit

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

// TestHubnessFeaturesByHand counts a bank of three queries over a catalog of four tools, the
// top two of each counted, with one pseudo-query (a = 1) at the average share s̄ = 2/4:
//
//	q1: A B C    q2: A C D    q3: B A D
//
// A is in the top two of all three, B of two (q1, q3), C of one (q2; q1 has it third), D of none
// (q2 and q3 have it third). Each list is fitted with its own query left out: for q1, A counts 2
// of the 2 other queries, (2 + ½)/(2 + 1) = 5/6; B 1 of 2: ½; C (third in q1, so q1 never
// counted it) keeps its 1 of 2: ½; for q2, C counts 0 of 2: 1/6.
func TestHubnessFeaturesByHand(t *testing.T) {
	lists := []CalibrationList{
		{Tools: []string{"A", "B", "C"}},
		{Tools: []string{"A", "C", "D"}},
		{Tools: []string{"B", "A", "D"}},
	}
	h, x, err := hubFeatures(lists, &HubConfig{Depth: 2, Strength: 1, Catalog: []string{"A", "B", "C", "D"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.Counts["A"] != 3 || h.Counts["B"] != 2 || h.Counts["C"] != 1 || h.Counts["D"] != 0 || h.Queries != 3 || h.MeanShare != 0.5 {
		t.Fatalf("counts %v, queries %d, mean share %v", h.Counts, h.Queries, h.MeanShare)
	}
	ln := math.Log
	want := []float64{
		ln(2.5 / 3), ln(1.5 / 3), ln(1.5 / 3), // q1: A 2 others, B 1, C 1 (q1 did not count C)
		ln(2.5 / 3), ln(0.5 / 3), ln(0.5 / 3), // q2: A 2, C 0 (q2's own count left out), D 0
		ln(1.5 / 3), ln(2.5 / 3), ln(0.5 / 3), // q3: B 1, A 2, D 0
	}
	for i := range want {
		near(t, "feature "+string(rune('0'+i)), x[i], want[i])
	}
	// Applied to a query outside the bank, every count is whole: A 3 of 3, D 0.
	near(t, "Feature(A)", h.Feature("A"), ln(3.5/4))
	near(t, "Feature(D)", h.Feature("D"), ln(0.5/4))
	// A tool the bank did not cover: the mean feature of the catalog's four tools.
	near(t, "Feature(E)", h.Feature("E"), (ln(3.5/4)+ln(2.5/4)+ln(1.5/4)+ln(0.5/4))/4)

	if _, _, err := hubFeatures(lists, &HubConfig{Depth: 2, Strength: 1, Catalog: []string{"A", "B", "C"}}); err == nil || !strings.Contains(err.Error(), `"D" is not in the catalog`) {
		t.Fatalf("a tool outside the catalog: %v", err)
	}
	for _, cfg := range []HubConfig{{Depth: 0, Strength: 1, Catalog: []string{"A"}}, {Depth: 1, Strength: 0, Catalog: []string{"A"}}, {Depth: 1, Strength: 1}} {
		if _, _, err := hubFeatures(lists, &cfg); err == nil {
			t.Fatalf("%+v accepted", cfg)
		}
	}
}

// hubLists draws n queries over a catalog of 40 tools: each query's ten candidates are a
// random sample, and a candidate is relevant with a probability that falls with its rank and,
// with hubEffect > 0, with how many queries retrieve the tool (hubs: the first tools, drawn
// far more often).
func hubLists(n int, hubEffect float64, seed uint64) ([]CalibrationList, []string) {
	rng := rand.New(rand.NewPCG(seed, 3))
	catalog := make([]string, 40)
	weight := make([]float64, 40)
	for i := range catalog {
		catalog[i] = string(rune('a'+i/26)) + string(rune('a'+i%26))
		weight[i] = 1 / float64(1+i) // tool 0 is the biggest hub
	}
	var lists []CalibrationList
	for q := 0; q < n; q++ {
		l := CalibrationList{}
		used := map[int]bool{}
		top := 0.6 + 0.3*rng.Float64()
		for len(l.Tools) < 10 {
			i := sampleWeighted(rng, weight)
			if used[i] {
				continue
			}
			used[i] = true
			r := len(l.Tools)
			sem := top - 0.02*float64(r) - 0.01*rng.Float64()
			z := -0.5 + 4*(sem-top) - 0.7*math.Log1p(float64(r)) - hubEffect*math.Log(weight[i]*40)
			l.Tools = append(l.Tools, catalog[i])
			l.Sem = append(l.Sem, sem)
			l.Relevant = append(l.Relevant, rng.Float64() < 1/(1+math.Exp(-z)))
		}
		lists = append(lists, l)
	}
	return lists, catalog
}

func sampleWeighted(rng *rand.Rand, w []float64) int {
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	u := rng.Float64() * sum
	for i, v := range w {
		if u < v {
			return i
		}
		u -= v
	}
	return len(w) - 1
}

// TestCalibratorHubnessMatchesScikitLearn fits the five-feature model on lists with a hub
// effect and compares the weights and the likelihood-ratio statistic with scikit-learn's exact
// Newton–Cholesky solver, the hubness feature computed in Python from the tool ids alone (each
// list's own query left out, as the Go fit does).
func TestCalibratorHubnessMatchesScikitLearn(t *testing.T) {
	python := testassets.Python(t)
	lists, catalog := hubLists(400, 0.8, 21)
	c, err := FitCalibrator(lists, 1e-6, &HubConfig{Depth: 10, Strength: 10, Catalog: catalog})
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub == nil {
		t.Fatalf("hubness dropped on lists with a hub effect: %s", c.HubDropped)
	}
	script := `
import json, math, sys
import numpy as np
from sklearn.linear_model import LogisticRegression
d = json.load(open(sys.argv[1]))
lists, catalog = d["lists"], d["catalog"]
depth, a = 10, 10.0
count = {t: 0 for t in catalog}
for l in lists:
    for t in l["Tools"][:depth]:
        count[t] += 1
n, sbar = len(lists), depth / len(catalog)
x, h, y = [], [], []
for l in lists:
    top = l["Sem"][0]
    for i, (s, t, r) in enumerate(zip(l["Sem"], l["Tools"], l["Relevant"])):
        x.append([s, s - top, math.log1p(i)])
        own = 1 if i < depth else 0
        h.append(math.log((count[t] - own + a * sbar) / (n - 1 + a)))
        y.append(1 if r else 0)
x, h, y = np.array(x), np.array(h), np.array(y)
def fit(X):
    m = LogisticRegression(C=1e6, solver="newton-cholesky", tol=1e-14, max_iter=1000).fit(X, y)
    p = m.predict_proba(X)[:, 1]
    ll = float(np.sum(y * np.log(p) + (1 - y) * np.log(1 - p)))
    return [m.intercept_[0]] + list(m.coef_[0]), ll
w0, ll0 = fit(x)
w1, ll1 = fit(np.column_stack([x, h]))
print(json.dumps({"weights": w1, "lr": 2 * (ll1 - ll0)}))
`
	var want struct {
		Weights []float64
		LR      float64
	}
	runReference(t, python, script, map[string]any{"lists": lists, "catalog": catalog}, &want)
	got := append(c.Weights[:], c.Hub.Weight)
	for i, w := range want.Weights {
		if math.Abs(got[i]-w) > 1e-7*(1+math.Abs(w)) {
			t.Errorf("weight %d: %v, scikit-learn %v", i, got[i], w)
		}
	}
	if math.Abs(c.Hub.LikelihoodRatio-want.LR) > 1e-6*(1+want.LR) {
		t.Errorf("likelihood ratio %v, scikit-learn %v", c.Hub.LikelihoodRatio, want.LR)
	}
	if c.Hub.Weight >= 0 || c.Hub.LikelihoodRatio < hubMinLikelihoodRatio {
		t.Errorf("kept with weight %v and likelihood ratio %v", c.Hub.Weight, c.Hub.LikelihoodRatio)
	}
}

// runReference runs a Python reference script on input (as JSON, the file its first argument)
// and decodes the JSON it prints into out.
func runReference(t *testing.T, python, script string, input, out any) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in.json")
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(python, "-c", script, in).CombinedOutput()
	if err != nil {
		t.Fatalf("reference: %v\n%s", err, got)
	}
	if err := json.Unmarshal(got, out); err != nil {
		t.Fatalf("reference output: %v: %s", err, got)
	}
}

// TestCalibratorDropsHubnessWithoutEffect: where relevance does not depend on hubness, or
// rises with it, the fit leaves the feature out and says why, and its base weights are those of
// the fit without it.
func TestCalibratorDropsHubnessWithoutEffect(t *testing.T) {
	for _, tc := range []struct {
		name   string
		effect float64
		n      int
		reason string
	}{
		{"hubs more often relevant", -0.8, 400, "is not negative"},
		{"no effect, few queries", 0, 30, ""},
	} {
		lists, catalog := hubLists(tc.n, tc.effect, 5)
		c, err := FitCalibrator(lists, 1e-6, &HubConfig{Depth: 10, Strength: 10, Catalog: catalog})
		if err != nil {
			t.Fatal(err)
		}
		base, _ := FitCalibrator(lists, 1e-6, nil)
		if c.Hub != nil || c.HubDropped == "" || !strings.Contains(c.HubDropped, tc.reason) {
			t.Fatalf("%s: hub %+v, dropped %q", tc.name, c.Hub, c.HubDropped)
		}
		if c.Weights != base.Weights {
			t.Fatalf("%s: weights %v, without hubness %v", tc.name, c.Weights, base.Weights)
		}
	}
}

// TestCalibratorApplyWithHubnessByHand: with weights set by hand, a candidate's relevance is
// σ(w0 + w1·s + w2·(s − s_top) + w3·log(1+rank) + w_h·hub(tool)), hub looked up by the tool's
// index in the ids given to ForTools, beyond them the catalog's mean feature.
func TestCalibratorApplyWithHubnessByHand(t *testing.T) {
	c := &Calibrator{Weights: [4]float64{-1, 2, 3, -0.5},
		Hub: &Hubness{Weight: -0.4, Depth: 1, Queries: 3, Strength: 1, MeanShare: 0.5,
			Counts: map[string]int{"x": 3, "y": 0}}}
	bound := c.ForTools([]string{"y", "x"}) // tool 0 is y, tool 1 is x
	if c.Hub.byTool != nil {
		t.Fatal("ForTools changed the calibrator it was called on")
	}
	cands := []Candidate{{Tool: 1, Sem: 0.8}, {Tool: 0, Sem: 0.7}, {Tool: 5, Sem: 0.6}}
	bound.Apply(cands)
	sig := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	hx, hy := math.Log(3.5/4), math.Log(0.5/4)
	near(t, "x", cands[0].Relevance, sig(-1+2*0.8-0.4*hx))
	near(t, "y", cands[1].Relevance, sig(-1+2*0.7+3*(0.7-0.8)-0.5*math.Log(2)-0.4*hy))
	near(t, "a tool added later", cands[2].Relevance, sig(-1+2*0.6+3*(0.6-0.8)-0.5*math.Log(3)-0.4*(hx+hy)/2))
	// Without the feature, the calibrator is unchanged by ForTools and ignores the tools.
	plain := &Calibrator{Weights: c.Weights}
	if plain.ForTools([]string{"x"}) != plain {
		t.Fatal("ForTools copied a calibrator without hubness")
	}
}

// TestCalibratorValidate refuses a hubness feature no fit could have produced.
func TestCalibratorValidate(t *testing.T) {
	ok := Hubness{Weight: -0.4, Depth: 1, Queries: 3, Strength: 1, MeanShare: 0.5, LikelihoodRatio: 7, Counts: map[string]int{"x": 3, "y": 0}}
	if err := (&Calibrator{Hub: &ok}).Validate(); err != nil {
		t.Fatal(err)
	}
	for want, mutate := range map[string]func(h *Hubness){
		"hub.depth":                   func(h *Hubness) { h.Depth = 0 },
		"hub.queries":                 func(h *Hubness) { h.Queries = 1 },
		"hub.strength":                func(h *Hubness) { h.Strength = 0 },
		"hub.mean_share":              func(h *Hubness) { h.MeanShare = 0.25 }, // 1 / 2 tools is 0.5
		"hub.counts: empty":           func(h *Hubness) { h.Counts = nil },
		`hub.counts["x"]`:             func(h *Hubness) { h.Counts = map[string]int{"x": 4, "y": 0} },
		"hub.weight = NaN":            func(h *Hubness) { h.Weight = math.NaN() },
		"hub.weight = 0.4":            func(h *Hubness) { h.Weight = 0.4 },
		"hub.likelihood_ratio = +Inf": func(h *Hubness) { h.LikelihoodRatio = math.Inf(1) },
		"hub.likelihood_ratio = 3":    func(h *Hubness) { h.LikelihoodRatio = 3 },
	} {
		h := ok
		mutate(&h)
		if err := (&Calibrator{Hub: &h}).Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if err := (&Calibrator{Weights: [4]float64{0, math.NaN()}}).Validate(); err == nil || !strings.Contains(err.Error(), "weights[1]") {
		t.Errorf("a NaN weight: %v", err)
	}
}

// BenchmarkCalibratorApply calibrates one list of K = 10 candidates, with and without the
// hubness feature (one more multiply-add per candidate and a lookup by tool index).
func BenchmarkCalibratorApply(b *testing.B) {
	ids := make([]string, 316)
	counts := map[string]int{}
	for i := range ids {
		ids[i] = "tool" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		counts[ids[i]] = i % 40
	}
	plain := &Calibrator{Weights: [4]float64{-2, 4, 3, -0.5}}
	hub := (&Calibrator{Weights: plain.Weights, Hub: &Hubness{Weight: -0.9, Depth: 10, Queries: 456, Strength: 100,
		MeanShare: 10.0 / 316, Counts: counts}}).ForTools(ids)
	cands := make([]Candidate, 10)
	for i := range cands {
		cands[i] = Candidate{Tool: 31 * i, Sem: 0.8 - 0.02*float64(i)}
	}
	for _, c := range []struct {
		name string
		cal  *Calibrator
	}{{"base", plain}, {"hubness", hub}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.cal.Apply(cands)
			}
		})
	}
}
