package metrics

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
)

func TestPairedTTestHandComputed(t *testing.T) {
	// d = 1,2,3,4: mean 2.5, sd √(5/3), t = 2.5/√(5/12) = √15, 3 degrees of freedom. For ν = 3,
	// P(T ≤ t) = 1/2 + (1/π)(u/(1+u²) + atan u) with u = t/√3 = √5, so
	// p = 1 - (2/π)(√5/6 + atan √5).
	res, err := PairedTTest([]float64{1, 2, 3, 4}, []float64{0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	wantP := 1 - 2/math.Pi*(math.Sqrt(5)/6+math.Atan(math.Sqrt(5)))
	if math.Abs(res.Statistic-math.Sqrt(15)) > 1e-12 || math.Abs(res.P-wantP) > 1e-12 || res.N != 4 || res.MeanDiff != 2.5 {
		t.Errorf("PairedTTest = %+v, want t=%v p=%v", res, math.Sqrt(15), wantP)
	}
	// Swapping the systems flips t and keeps p.
	sw, _ := PairedTTest([]float64{0, 0, 0, 0}, []float64{1, 2, 3, 4})
	if sw.Statistic != -res.Statistic || sw.P != res.P {
		t.Errorf("swapped: %+v vs %+v", sw, res)
	}
	// Identical systems: undefined. Constant non-zero difference: t infinite, p 0. One pair: undefined.
	if r, _ := PairedTTest([]float64{1, 2}, []float64{1, 2}); !math.IsNaN(r.P) || !math.IsNaN(r.Statistic) {
		t.Errorf("identical systems: %+v, want NaN", r)
	}
	if r, _ := PairedTTest([]float64{2, 3}, []float64{1, 2}); r.P != 0 || !math.IsInf(r.Statistic, 1) {
		t.Errorf("constant difference: %+v, want t=+Inf p=0", r)
	}
	if r, _ := PairedTTest([]float64{2}, []float64{1}); !math.IsNaN(r.P) {
		t.Errorf("one pair: %+v, want NaN", r)
	}
	if _, err := PairedTTest([]float64{1, 2}, []float64{1}); err == nil {
		t.Error("length mismatch accepted")
	}
	if _, err := PairedTTest(nil, nil); err == nil {
		t.Error("no pairs accepted")
	}
}

// TestPairedTTestMatchesScipy compares t and p with scipy.stats.ttest_rel on random per-query
// score pairs of several sizes (binary hit scores, reciprocal ranks, continuous scores).
func TestPairedTTestMatchesScipy(t *testing.T) {
	python := testassets.Python(t)
	rng := rand.New(rand.NewPCG(7, 8))
	type pair struct {
		A []float64 `json:"a"`
		B []float64 `json:"b"`
	}
	var cases []pair
	for i := range 300 {
		n := 2 + rng.IntN(200)
		a, b := make([]float64, n), make([]float64, n)
		for j := range n {
			switch i % 3 {
			case 0:
				a[j], b[j] = float64(rng.IntN(2)), float64(rng.IntN(2))
			case 1:
				a[j], b[j] = 1/float64(1+rng.IntN(10)), 1/float64(1+rng.IntN(12))
			default:
				a[j], b[j] = rng.NormFloat64()+0.1, rng.NormFloat64()
			}
		}
		cases = append(cases, pair{a, b})
	}
	cases = append(cases, pair{[]float64{1, 0, 1}, []float64{1, 0, 1}}, pair{[]float64{3, 4, 5}, []float64{2, 3, 4}})
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	raw, _ := json.Marshal(cases)
	if err := os.WriteFile(in, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(python, filepath.Join("testdata", "ttest_ref.py"), in, out).CombinedOutput(); err != nil {
		t.Fatalf("ttest_ref.py: %v\n%s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Infinite t comes back as JSON Infinity, which encoding/json rejects: map it first.
	var ref []struct{ T, P *float64 }
	if err := json.Unmarshal(fixInfinity(raw), &ref); err != nil {
		t.Fatal(err)
	}
	same := func(got float64, want *float64) bool {
		if want == nil {
			return math.IsNaN(got)
		}
		if math.IsInf(*want, 0) || *want > 1e300 || *want < -1e300 {
			return math.IsInf(got, int(math.Copysign(1, *want)))
		}
		return math.Abs(got-*want) <= 1e-9*math.Max(1, math.Abs(*want))
	}
	for i, c := range cases {
		res, err := PairedTTest(c.A, c.B)
		if err != nil {
			t.Fatal(err)
		}
		if !same(res.Statistic, ref[i].T) || !same(res.P, ref[i].P) {
			t.Errorf("case %d (n=%d): t=%v p=%v, scipy t=%v p=%v", i, len(c.A), res.Statistic, res.P, deref(ref[i].T), deref(ref[i].P))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return "NaN"
	}
	return *p
}

// fixInfinity replaces Python's JSON Infinity literals by ±1e308 sentinels.
func fixInfinity(raw []byte) []byte {
	s := string(raw)
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch {
		case len(s)-i >= 9 && s[i:i+9] == "-Infinity":
			out = append(out, "-1e308"...)
			i += 9
		case len(s)-i >= 8 && s[i:i+8] == "Infinity":
			out = append(out, "1e308"...)
			i += 8
		default:
			out = append(out, s[i])
			i++
		}
	}
	return out
}

// exactSignFlipP enumerates all 2^n sign assignments (independent of the Monte Carlo code).
func exactSignFlipP(d []float64) float64 {
	obs := 0.0
	for _, x := range d {
		obs += x
	}
	obs = math.Abs(obs)
	count := 0
	for mask := 0; mask < 1<<len(d); mask++ {
		s := 0.0
		for i, x := range d {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-1e-12 {
			count++
		}
	}
	return float64(count) / float64(int(1)<<len(d))
}

func TestPairedRandomization(t *testing.T) {
	// Hand case: d = 1,1,1. Only all-plus and all-minus reach |mean| = 1: exact p = 2/8.
	cases := []struct {
		a, b []float64
	}{
		{[]float64{1, 1, 1}, []float64{0, 0, 0}},
		{[]float64{1, 0.5, 1, 0, 1, 1, 0.33, 1, 0, 1, 1, 0.25}, []float64{0, 0.5, 1, 1, 0, 0.5, 0.33, 0, 0, 1, 0.5, 1}},
		{[]float64{0.9, 0.1, 0.4, 0.8, 0.7, 0.6, 0.3, 0.9, 1, 0.2}, []float64{0.1, 0.2, 0.3, 0.5, 0.4, 0.6, 0.2, 0.1, 0.5, 0.3}},
		{[]float64{1, 0, 1}, []float64{1, 0, 1}}, // identical: p = 1
	}
	const rounds = 40000
	for i, c := range cases {
		d := make([]float64, len(c.a))
		for j := range d {
			d[j] = c.a[j] - c.b[j]
		}
		exact := exactSignFlipP(d)
		if i == 0 && exact != 0.25 {
			t.Fatalf("exact enumeration of d=1,1,1 gives %v, want 0.25", exact)
		}
		res, err := PairedRandomization(c.a, c.b, rounds, rand.New(rand.NewPCG(uint64(i), 99)))
		if err != nil {
			t.Fatal(err)
		}
		// Monte Carlo error: 5 standard errors of a binomial proportion, plus the +1 correction.
		tol := 5*math.Sqrt(exact*(1-exact)/rounds) + 2.0/rounds
		if math.Abs(res.P-exact) > tol {
			t.Errorf("case %d: p = %v, exact %v (tolerance %v)", i, res.P, exact, tol)
		}
		again, _ := PairedRandomization(c.a, c.b, rounds, rand.New(rand.NewPCG(uint64(i), 99)))
		if again.P != res.P {
			t.Errorf("case %d: same seed gave p = %v then %v", i, res.P, again.P)
		}
	}
	// Strong effect over many pairs: p is bounded below by 1/(rounds+1), never 0.
	a, b := make([]float64, 200), make([]float64, 200)
	for i := range a {
		a[i] = 1
	}
	res, _ := PairedRandomization(a, b, 999, rand.New(rand.NewPCG(1, 2)))
	if res.P != 1.0/1000 {
		t.Errorf("p = %v, want 1/1000", res.P)
	}
	if r, _ := PairedRandomization(a, b, 0, rand.New(rand.NewPCG(1, 2))); !math.IsNaN(r.P) {
		t.Errorf("0 rounds: p = %v, want NaN", r.P)
	}
	if _, err := PairedRandomization(a, b[:3], 10, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Error("length mismatch accepted")
	}
}
