package bandit

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/rated-dev/rated/internal/cputime"
)

var paperWeights = FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}

// denseLinUCB is an independent reference for RATED's model: A = λI + D and D ← γD + diag(x̃x̃ᵀ)
// kept as gonum matrices, x̃ = [β·x; 1], θ and A⁻¹ from a general matrix inverse.
type denseLinUCB struct {
	lambda, gamma, alpha, beta float64
	D                          *mat.Dense
	b                          *mat.VecDense
}

func newDense(n int, lambda, gamma, alpha, beta, prior float64) *denseLinUCB {
	r := &denseLinUCB{lambda: lambda, gamma: gamma, alpha: alpha, beta: beta, D: mat.NewDense(n, n, nil), b: mat.NewVecDense(n, nil)}
	r.b.SetVec(n-1, lambda*prior)
	return r
}

func (r *denseLinUCB) augment(x []float64) *mat.VecDense {
	v := mat.NewVecDense(len(x)+1, nil)
	for i, xi := range x {
		v.SetVec(i, r.beta*xi)
	}
	v.SetVec(len(x), 1)
	return v
}

func (r *denseLinUCB) update(x []float64, y float64) {
	xt := r.augment(x)
	var outer mat.Dense
	outer.Outer(1, xt, xt)
	for i := 0; i < xt.Len(); i++ {
		for j := 0; j < xt.Len(); j++ {
			if i != j {
				outer.Set(i, j, 0)
			}
		}
	}
	r.D.Scale(r.gamma, r.D)
	r.D.Add(r.D, &outer)
	r.b.ScaleVec(r.gamma, r.b)
	r.b.AddScaledVec(r.b, y, xt)
}

func (r *denseLinUCB) score(x []float64) float64 {
	xt := r.augment(x)
	n := xt.Len()
	A := mat.NewDense(n, n, nil)
	A.Copy(r.D)
	for i := 0; i < n; i++ {
		A.Set(i, i, A.At(i, i)+r.lambda)
	}
	var Ainv mat.Dense
	if err := Ainv.Inverse(A); err != nil {
		panic(err)
	}
	var theta, ax mat.VecDense
	theta.MulVec(&Ainv, r.b)
	ax.MulVec(&Ainv, xt)
	return mat.Dot(&theta, xt) + r.alpha*math.Sqrt(mat.Dot(xt, &ax))
}

func unit(v []float64) []float64 {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x / math.Sqrt(n)
	}
	return out
}

// banditOnly isolates S_bandit: with weights (0, 1, 0) the fused score is the bandit score.
var banditOnly = FusionWeights{Bandit: 1}

func TestLinUCBByHand(t *testing.T) {
	// d = 3, x = e1, λ = 1, γ = 0.5, α = 0.1, prior 0.6, intercept init.
	p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.1, Gamma: 0.5, Ridge: 1, Weights: banditOnly, ContextScale: 1}, 1, 3)
	s := &Step{Context: []float64{1, 0, 0}, Candidates: []Candidate{{Tool: 0, Prior: 0.6}}}
	out := make([]float64, 1)
	p.Scores(s, out)
	// Untouched: θ = (0,0,0,0.6), x̃ = (1,0,0,1): 0.6 + 0.1·√(2/1).
	if want := 0.6 + 0.1*math.Sqrt(2); math.Abs(out[0]-want) > 1e-12 {
		t.Fatalf("cold score %v, want %v", out[0], want)
	}
	p.Observe(s, 0, ran(false))
	// D = (1,0,0,1); b = (0,0,0,0.5·0.6=0.3); A = (2,1,1,2); θ = (0,0,0,0.15).
	// score = 0.15 + 0.1·√(1/2 + 1/2) = 0.25.
	p.Scores(s, out)
	if math.Abs(out[0]-0.25) > 1e-12 {
		t.Fatalf("after one failure %v, want 0.25", out[0])
	}
	p.Observe(s, 0, ran(true))
	// D = 0.5·(1,0,0,1) + (1,0,0,1) = (1.5,0,0,1.5); b = 0.5·(0,0,0,0.3) + (1,0,0,1) = (1,0,0,1.15)
	// A = (2.5,1,1,2.5); θ·x̃ = 1/2.5 + 1.15/2.5 = 0.86; bonus 0.1·√(2/2.5).
	p.Scores(s, out)
	if want := 0.86 + 0.1*math.Sqrt(0.8); math.Abs(out[0]-want) > 1e-12 {
		t.Fatalf("after failure+success %v, want %v", out[0], want)
	}
}

func TestLinUCBAgainstDenseReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, beta := range []float64{1, 0.3} {
		for _, gamma := range []float64{1, 0.95, 0.5} {
			p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.3, Gamma: gamma, Ridge: 0.7, Weights: banditOnly, ContextScale: beta}, 1, 3)
			ref := newDense(4, 0.7, gamma, 0.3, beta, 0.4)
			out := make([]float64, 1)
			for step := 0; step < 40; step++ {
				x := unit([]float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()})
				s := &Step{Context: x, Candidates: []Candidate{{Tool: 0, Prior: 0.4}}}
				p.Scores(s, out)
				if want := ref.score(x); math.Abs(out[0]-want) > 1e-9 {
					t.Fatalf("β=%v γ=%v step %d: score %v, reference %v", beta, gamma, step, out[0], want)
				}
				y := rng.Float64() < 0.6
				p.Observe(s, 0, ran(y))
				ref.update(x, map[bool]float64{true: 1, false: 0}[y])
			}
		}
	}
}

func TestRidgeFloorKeepsAWellConditioned(t *testing.T) {
	// Without the floor, γⁿλ → 0 for directions not seen again and A⁻¹ explodes.
	p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 1, Gamma: 0.5, Ridge: 1, Weights: banditOnly, ContextScale: 1}, 1, 2)
	s := &Step{Context: []float64{1, 0}, Candidates: []Candidate{{Tool: 0, Prior: 0.5}}}
	for i := 0; i < 200; i++ {
		p.Observe(s, 0, ran(true))
	}
	a := p.arms[0]
	for i, v := range a.invA {
		if v > 1 || math.IsNaN(v) {
			t.Fatalf("A⁻¹[%d] = %v exceeds 1/λ", i, v)
		}
	}
}

func TestRATEDSwitchesAwayFromFailedTool(t *testing.T) {
	p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.1, Gamma: 0.95, Ridge: 1, Weights: paperWeights, ContextScale: 1}, 2, 2)
	s := &Step{Context: []float64{1, 0}, Candidates: []Candidate{{Tool: 0, Sem: 0.80, Prior: 0.7}, {Tool: 1, Sem: 0.78, Prior: 0.7}}}
	if got := p.Choose(s); got != 0 {
		t.Fatalf("first choice %d, want the semantic top-1", got)
	}
	p.Observe(s, 0, ran(false))
	if got := p.Choose(s); got != 1 {
		t.Fatalf("after one failure chose %d, want the close alternative 1", got)
	}
}

func TestBlacklistRetryStaticPriorOnly(t *testing.T) {
	s := &Step{Candidates: []Candidate{{Tool: 5, Sem: 1, Prior: 0.1}, {Tool: 6, Sem: 0.9, Prior: 0.9}, {Tool: 7, Sem: 0.5}}}
	b := NewBlacklist("bl")
	if b.Choose(s) != 0 {
		t.Fatal("blacklist starts with top-1")
	}
	b.Observe(s, 0, ran(false))
	if b.Choose(s) != 1 {
		t.Fatal("blacklist must skip a failed tool")
	}
	b.Observe(s, 1, ran(false))
	b.Observe(s, 2, ran(false))
	if b.Choose(s) != 0 {
		t.Fatal("all excluded: fall back to top-1")
	}
	// Retry is the static ranking with an attempt budget: after a failed first choice, the
	// next allowed position.
	s.Excluded = []bool{true, false, false}
	if got := NewStatic("r").Choose(s); got != 1 {
		t.Fatalf("retry's second attempt chose %d, want 1", got)
	}
	s.Excluded = nil
	if NewStatic("s").Choose(s) != 0 {
		t.Fatal("static is top-1")
	}
	// 0.75·1 + 0.1·0.1 = 0.76 < 0.75·0.9 + 0.1·0.9 = 0.765.
	if got := NewPriorOnly("p", paperWeights).Choose(s); got != 1 {
		t.Fatalf("prior-only chose %d, want 1", got)
	}
}

func TestCircuitBreakerGobreakerDefaults(t *testing.T) {
	p := NewCircuitBreaker("cb", BreakerConfig{ConsecutiveFailures: 5, CoolDown: 60, HalfOpenCalls: 1}, 2)
	s := &Step{Candidates: []Candidate{{Tool: 0}, {Tool: 1}}}
	for i := 0; i < 6; i++ { // trips after more than 5 consecutive failures
		s.T = i
		if got := p.Choose(s); got != 0 {
			t.Fatalf("step %d: breaker open too early", i)
		}
		p.Observe(s, 0, ran(false))
	}
	s.T = 6
	if got := p.Choose(s); got != 1 {
		t.Fatal("breaker did not open after 6 consecutive failures")
	}
	s.T = 5 + 60 // cool-down over: half-open lets a trial through
	if got := p.Choose(s); got != 0 {
		t.Fatal("breaker not half-open after the cool-down")
	}
	p.Observe(s, 0, ran(true))
	s.T++
	if got := p.Choose(s); got != 0 || p.breakers[0].state != closed {
		t.Fatal("a successful trial must close the breaker")
	}
}

func TestCircuitBreakerFailureRate(t *testing.T) {
	p := NewCircuitBreaker("cb", BreakerConfig{FailureRate: 0.5, Window: 4, MinCalls: 4, CoolDown: 10, HalfOpenCalls: 2}, 1)
	s := &Step{Candidates: []Candidate{{Tool: 0}}}
	for i, ok := range []bool{true, false, true, false} { // 2/4 = 50% at the 4th call
		s.T = i
		p.Observe(s, 0, ran(ok))
	}
	if p.breakers[0].state != open {
		t.Fatal("50% failures over a full window must trip")
	}
}

func TestGlobalAndSlidingWindowUCB(t *testing.T) {
	g := NewGlobalUCB("g", 0, banditOnly, 2)
	s := &Step{Candidates: []Candidate{{Tool: 0, Prior: 0.9}, {Tool: 1, Prior: 0.5}}}
	g.Observe(s, 0, ran(false))
	g.Observe(s, 0, ran(false))
	// tool 0 mean (0+0.9)/3 = 0.3 < tool 1 mean 0.5/1.
	if got := g.Choose(s); got != 1 {
		t.Fatalf("global UCB chose %d", got)
	}
	w := NewSlidingWindowUCB("sw", 0, 10, banditOnly, 2)
	for i := 0; i < 3; i++ {
		s.T = i
		w.Observe(s, 0, ran(false))
	}
	s.T = 3
	if w.Choose(s) != 1 {
		t.Fatal("SW-UCB must avoid recent failures")
	}
	// The window of the decision at step T is steps T−10 … T−1 (Garivier & Moulines): at 12 the
	// failure of step 2 is still in it, mean (0 + 0.9)/(1 + 1) = 0.45 < 0.5; at 13 it is not.
	s.T = 12
	if w.Choose(s) != 1 {
		t.Fatal("SW-UCB must keep the failure of step T−W in the window")
	}
	s.T = 13
	if w.Choose(s) != 0 {
		t.Fatal("SW-UCB must forget the failure of step T−W−1")
	}
	s.T = 20 // failures left the window: back to the prior, 0.9 > 0.5
	if w.Choose(s) != 0 {
		t.Fatal("SW-UCB must forget failures outside the window")
	}
}

func TestBatchGRPOUpdateByHand(t *testing.T) {
	p := NewBatchGRPO("g", GRPOConfig{Batch: 2, LearningRate: 1, Temperature: 1}, 2, rand.New(rand.NewPCG(1, 1)))
	s := &Step{Candidates: []Candidate{{Tool: 0, Sem: 0}, {Tool: 1, Sem: 0}}}
	// Uniform policy (π = ½, ½). Two samples: chose 0 → reward 0, chose 1 → reward 1.
	// mean .5, std .5, advantages −1 and +1.
	// β0 += (1/2)[−1·(1−½) + 1·(−½)] = −½; β1 += (1/2)[−1·(−½) + 1·(1−½)] = +½.
	p.Observe(s, 0, ran(false))
	if p.beta[0] != 0 {
		t.Fatal("parameters must not change before the batch is full")
	}
	p.Observe(s, 1, ran(true))
	if math.Abs(p.beta[0]+0.5) > 1e-12 || math.Abs(p.beta[1]-0.5) > 1e-12 {
		t.Fatalf("β = %v, want [-0.5 0.5]", p.beta)
	}
}

func TestSpecValidation(t *testing.T) {
	cases := []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", Kind: "oracle"}, `policies[0].kind: unknown policy "oracle"`},
		{Spec{Name: "x", Kind: "rated", Gamma: 1.5}, "policies[0].gamma"},
		{Spec{Name: "x", Kind: "rated", Gamma: 0}, "policies[0].gamma"},
		{Spec{Name: "x", Kind: "rated", Gamma: 0.9, Weights: &FusionWeights{0.5, 0.5, 0.5}}, "policies[0].weights weights"},
		{Spec{Name: "", Kind: "static"}, "policies[0].name"},
	}
	for _, c := range cases {
		err := c.spec.Validate("policies[0]")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
	if err := (Spec{Name: "ok", Kind: "rated", Gamma: 0.95}).Validate("p"); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkRATEDDecision(b *testing.B) {
	for _, d := range []int{384, 768} {
		b.Run("d="+itoa(d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.1, Gamma: 0.95, Ridge: 1, Weights: paperWeights, ContextScale: 1}, 1000, d)
			x := make([]float64, d)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			x = unit(x)
			cands := make([]Candidate, 10)
			for i := range cands {
				cands[i] = Candidate{Tool: rng.IntN(1000), Sem: rng.Float64(), Prior: rng.Float64()}
			}
			s := &Step{Context: x, Candidates: cands}
			for i := range cands { // every arm touched: the slow path
				p.Observe(s, i, ran(i%2 == 0))
			}
			b.ResetTimer()
			cpu := cpuNow(b)
			for i := 0; i < b.N; i++ {
				p.Choose(s)
			}
			reportCPU(b, cpu)
		})
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// BenchmarkFullMatrixLinUCBDecision is the reference for BenchmarkRATEDDecision: the same
// decision (10 candidates) with a full d×d A⁻¹ per tool, as textbook LinUCB keeps it.
func BenchmarkFullMatrixLinUCBDecision(b *testing.B) {
	for _, d := range []int{384, 768} {
		b.Run("d="+itoa(d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			x := make([]float64, d+1)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			xv := mat.NewVecDense(d+1, unit(x))
			ainv := make([]*mat.SymDense, 10)
			theta := make([]*mat.VecDense, 10)
			for i := range ainv {
				m := mat.NewSymDense(d+1, nil)
				for j := 0; j <= d; j++ {
					m.SetSym(j, j, 1)
				}
				ainv[i], theta[i] = m, mat.NewVecDense(d+1, nil)
			}
			var tmp mat.VecDense
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				best := math.Inf(-1)
				for c := 0; c < 10; c++ {
					tmp.MulVec(ainv[c], xv)
					s := mat.Dot(theta[c], xv) + 0.1*math.Sqrt(mat.Dot(xv, &tmp))
					best = math.Max(best, s)
				}
				_ = best
			}
		})
	}
}

// ran is the feedback of the paper's execution protocol.
func ran(ok bool) Feedback { return Feedback{Executed: ok} }

// BenchmarkRATEDDecisionUpdate times one step of RATED as the dynamic experiment runs it: the
// decision over K = 10 candidates and the discounted update of the chosen tool (issue goal:
// ≤ 5 µs at d = 768). BenchmarkRATEDDecision alone is its reference.
func BenchmarkRATEDDecisionUpdate(b *testing.B) {
	for _, d := range []int{384, 768} {
		b.Run("d="+itoa(d), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			p := NewDiscountedLinUCB("r", LinUCBConfig{Alpha: 0.1, Gamma: 0.95, Ridge: 1, Weights: paperWeights, ContextScale: 1}, 1000, d)
			x := make([]float64, d)
			for i := range x {
				x[i] = rng.NormFloat64()
			}
			x = unit(x)
			cands := make([]Candidate, 10)
			for i := range cands {
				cands[i] = Candidate{Tool: rng.IntN(1000), Sem: rng.Float64(), Prior: rng.Float64()}
			}
			s := &Step{Context: x, Candidates: cands}
			for i := range cands { // every arm touched: the slow path
				p.Observe(s, i, ran(i%2 == 0))
			}
			b.ResetTimer()
			cpu := cpuNow(b)
			for i := 0; i < b.N; i++ {
				s.T = i
				pos := p.Choose(s)
				p.Observe(s, pos, ran(i%3 != 0))
			}
			reportCPU(b, cpu)
		})
	}
}

// cpuNow is the process's CPU time: on a shared machine the benchmarks report it per operation
// (cpu-ns/op) beside wall time, which also counts waiting for a core.
func cpuNow(b *testing.B) time.Duration {
	d, err := cputime.Process()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuNow(b)-start)/float64(b.N), "cpu-ns/op")
}

// TestUniformPriorUntouchedArmMatchesCreatedArm: with PriorInit "uniform" an arm that was never
// updated scores θ₀ᵀx̃ = r·x₀·Σβxᵢ (x₀ = 1/√d) + α·√(x̃ᵀx̃/λ), whether or not it has been
// created: by hand, x = (½, ½, ½, ½), r = 0.8, β = 0.2, α = 0: 0.8 · ½ · 0.2 · 2 = 0.16.
func TestUniformPriorUntouchedArmMatchesCreatedArm(t *testing.T) {
	cfg := LinUCBConfig{Alpha: 0, Gamma: 0.95, Ridge: 1, ContextScale: 0.2, PriorInit: "uniform",
		Weights: FusionWeights{Bandit: 1}}
	p := NewDiscountedLinUCB("u", cfg, 2, 4)
	s := &Step{Context: []float64{0.5, 0.5, 0.5, 0.5}, Candidates: []Candidate{{Tool: 0, Prior: 0.8}, {Tool: 1, Prior: 0.8}}}
	p.arm(1, 0.8) // created, never updated
	out := make([]float64, 2)
	p.Scores(s, out)
	near(t, "untouched arm", out[0], 0.16)
	near(t, "created arm", out[1], 0.16)
}

// TestCalibratedOrderBaselinesByHand: with order: calibrated the static ranking, Retry and the
// blacklist walk the candidates by calibrated relevance (0.2, 0.7, 0.7, 0.4: positions 1 and 2
// tie, the better-ranked first), whatever the retriever's ranking says.
func TestCalibratedOrderBaselinesByHand(t *testing.T) {
	s := &Step{Candidates: []Candidate{{Tool: 5, Relevance: 0.2}, {Tool: 6, Relevance: 0.7}, {Tool: 7, Relevance: 0.7}, {Tool: 8, Relevance: 0.4}}}
	st, err := New(Spec{Name: "s", Kind: "static", Order: OrderCalibrated}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Choose(s); got != 1 {
		t.Fatalf("static by calibrated relevance chose %d, want 1", got)
	}
	s.Excluded = []bool{false, true, false, false}
	if got := st.Choose(s); got != 2 {
		t.Fatalf("retry's second attempt chose %d, want 2 (the tie's other half)", got)
	}
	s.Excluded = []bool{false, true, true, false}
	if got := st.Choose(s); got != 3 {
		t.Fatalf("retry's third attempt chose %d, want 3", got)
	}
	s.Excluded = nil
	bl, _ := New(Spec{Name: "b", Kind: "blacklist", Order: OrderCalibrated}, Env{})
	bl.Observe(s, 1, ran(false))
	if got := bl.Choose(s); got != 2 {
		t.Fatalf("blacklist by calibrated relevance chose %d after tool 6 failed, want 2", got)
	}
	for pos := range s.Candidates {
		bl.Observe(s, pos, ran(false))
	}
	if got := bl.Choose(s); got != 1 {
		t.Fatalf("every tool blacklisted: chose %d, want the most relevant, 1", got)
	}
	// The retriever's order (the default) is untouched by relevance.
	if got := NewStatic("r").Choose(s); got != 0 {
		t.Fatalf("static chose %d, want 0", got)
	}
	sp := Spec{Name: "x", Kind: "static", Order: OrderCalibrated}
	if !sp.NeedsCalibration() {
		t.Fatal("order: calibrated needs the calibration")
	}
	for _, bad := range []Spec{{Name: "x", Kind: "static", Order: "semantic"}, {Name: "x", Kind: "global_mab", Order: OrderCalibrated}} {
		if err := bad.Validate("p"); err == nil || !strings.Contains(err.Error(), "p.order") {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// BenchmarkCalibratedOrderChoose: Retry (k=3) over the calibrated order picking each of a step's
// three attempts among K = 10 candidates (docs/BENCHMARKS.md, "The calibrated order").
func BenchmarkCalibratedOrderChoose(b *testing.B) {
	cands := make([]Candidate, 10)
	for i := range cands {
		cands[i] = Candidate{Tool: i, Relevance: float64((i*7)%10) / 10}
	}
	s := &Step{Candidates: cands, Excluded: make([]bool, len(cands))}
	retry := NewStaticOrdered("retry", OrderCalibrated)
	for b.Loop() {
		clear(s.Excluded)
		for range 3 {
			s.Excluded[retry.Choose(s)] = true
		}
	}
}
