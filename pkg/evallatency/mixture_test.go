package evallatency

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/pkg/retrieve"
)

// knownMixture draws n vectors of dim 8 from three components with means e0, e1, e2 (weights
// 0.5, 0.3, 0.2) and independent noise of standard deviation 0.1 along e3 and 0.05 along e4:
// the reference the fit must recover.
func knownMixture(rng *rand.Rand, n int) (vecs [][]float32, comp []int) {
	weights := []float64{0.5, 0.3, 0.2}
	for range n {
		u, c := rng.Float64(), 0
		for u > weights[c] {
			u -= weights[c]
			c++
		}
		v := make([]float32, 8)
		v[c] = 1
		v[3] = float32(0.1 * rng.NormFloat64())
		v[4] = float32(0.05 * rng.NormFloat64())
		vecs, comp = append(vecs, v), append(comp, c)
	}
	return vecs, comp
}

// TestFitMixtureRecoversKnownMixture fits three components to draws of knownMixture: the
// weights, the means and the spread must be those of the generating mixture (the effective rank
// of a covariance with variances 0.01 and 0.0025 is (0.0125)²/(0.01² + 0.0025²) = 1.47, a
// little more after the scaling to unit length), and new draws must be unit vectors in the
// right proportions.
func TestFitMixtureRecoversKnownMixture(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vecs, _ := knownMixture(rng, 6000)
	m, err := FitMixture(vecs, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Components != 3 || m.Fitted != 6000 {
		t.Fatalf("components %d, fitted %d", m.Components, m.Fitted)
	}
	if m.EffectiveRank < 1.4 || m.EffectiveRank > 1.7 {
		t.Errorf("effective rank %.3f, want about 1.47", m.EffectiveRank)
	}
	wantWeight := []float64{0.5, 0.3, 0.2}
	prev := 0.0
	for c := range 3 {
		// The component whose mean points along e_axis.
		axis := 0
		for j := range 3 {
			if m.means[c*8+j] > m.means[c*8+axis] {
				axis = j
			}
		}
		if mu := m.means[c*8+axis]; mu < 0.99 {
			t.Errorf("component %d: mean along e%d is %.3f, want about 0.995", c, axis, mu)
		}
		if w := m.cum[c] - prev; math.Abs(w-wantWeight[axis]) > 0.03 {
			t.Errorf("component %d (e%d): weight %.3f, want %.1f", c, axis, w, wantWeight[axis])
		}
		prev = m.cum[c]
	}
	draws := m.Sample(rand.New(rand.NewPCG(3, 4)), 6000)
	count := make([]float64, 3)
	var spread float64
	for _, v := range draws {
		norm := 0.0
		for _, x := range v {
			norm += float64(x) * float64(x)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Fatalf("draw of squared norm %v", norm)
		}
		axis := 0
		for j := range 3 {
			if v[j] > v[axis] {
				axis = j
			}
		}
		count[axis]++
		spread += float64(v[3]) * float64(v[3])
	}
	for c, w := range wantWeight {
		if got := count[c] / 6000; math.Abs(got-w) > 0.03 {
			t.Errorf("draws along e%d: share %.3f, want %.1f", c, got, w)
		}
	}
	if sd := math.Sqrt(spread / 6000); math.Abs(sd-0.1) > 0.01 {
		t.Errorf("standard deviation of the draws along e3 %.4f, want about 0.1", sd)
	}
	if _, err := FitMixture(vecs[:5], 3, 1); err == nil {
		t.Error("fitted three components to five embeddings")
	}
}

// TestNeighbourProfileHandComputed uses four 2-D unit vectors at 0°, 10°, 90° and 100°: each
// one's nearest other vector is 10° away, and its 2nd nearest 90°, 80°, 80° and 90° away.
func TestNeighbourProfileHandComputed(t *testing.T) {
	var vecs [][]float32
	for _, deg := range []float64{0, 10, 90, 100} {
		a := deg * math.Pi / 180
		vecs = append(vecs, []float32{float32(math.Cos(a)), float32(math.Sin(a))})
	}
	p, err := NeighbourProfile(vecs, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	cos := func(deg float64) float64 { return math.Cos(deg * math.Pi / 180) }
	if math.Abs(p.Nearest-cos(10)) > 1e-6 {
		t.Errorf("nearest %.6f, want cos 10° = %.6f", p.Nearest, cos(10))
	}
	if want := (cos(90) + 2*cos(80) + cos(90)) / 4; math.Abs(p.KthNear-want) > 1e-6 {
		t.Errorf("2nd nearest %.6f, want %.6f", p.KthNear, want)
	}
	if _, err := NeighbourProfile(vecs, 3, 1); err == nil {
		t.Error("profile with 3 neighbours of 4 vectors accepted")
	}
}

// TestMeasureSearchFittedIVF runs the sweep on draws from a mixture fitted to clustered vectors,
// with IVF rows at 1 list and at every list: every row is labelled "mixture", scanning every
// list finds the exact top 10 (an int8 scan of everything with float32 re-scoring), and the IVF
// rows report the index's size and build time.
func TestMeasureSearchFittedIVF(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vecs, _ := knownMixture(rng, 400)
	mix, fit, err := FitCatalog(vecs, "known mixture", 3, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if fit.Fitted != 400 || fit.Components != 3 || fit.Real.K != 10 {
		t.Fatalf("fit %+v", fit)
	}
	// The draws are concentrated (cosines near 0.99 within a component), too close for int8 codes
	// to rank, so the shortlists re-scored in float32 are the whole catalog.
	rows, err := MeasureSearch(context.Background(), SearchConfig{Sizes: []int{2000}, Dim: 8, K: 10, Warmup: 2, Queries: 30, Rescore: 2000,
		IVF: retrieve.IVFParams{Rescore: 2000, Iterations: 5, Seed: 1, Probes: 1}, IVFProbes: []int{1, 1000}, IVFMax: 2000,
		Vectors: mix, Seed: 1, Now: steppingClock(time.Microsecond)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// exact, int8, IVF probing 1 list, IVF probing all 89 (2·√2000).
	if len(rows) != 4 {
		t.Fatalf("rows %+v", rows)
	}
	for _, r := range rows {
		t.Logf("%s: recall %.3f", r.Method, r.Recall)
		if r.Vectors != "mixture" {
			t.Errorf("%s: vectors %q", r.Method, r.Vectors)
		}
	}
	if !strings.Contains(rows[3].Method, "89 lists, 89 probed") || rows[3].Recall < 0.99 || rows[1].Recall < 0.99 {
		t.Errorf("every list probed: %+v", rows[3])
	}
	if rows[2].IndexMB <= 0 || rows[2].BuildS <= 0 || rows[2].Recall > rows[3].Recall {
		t.Errorf("one list probed: %+v", rows[2])
	}
	if _, err := MeasureSearch(context.Background(), SearchConfig{Sizes: []int{10}, Dim: 4, K: 1, Queries: 1, Vectors: mix, Now: time.Now}, nil); err == nil {
		t.Error("fitted vectors of 8 values accepted for a sweep of 4")
	}
}
