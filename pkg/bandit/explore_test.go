package bandit

import (
	"math"
	"strings"
	"testing"
)

// TestExploringDistributionsByHand checks both exploration kinds against hand-computed
// probabilities, and that the draws follow them.
func TestExploringDistributionsByHand(t *testing.T) {
	s := &Step{Candidates: []Candidate{{Tool: 0, Sem: 0.9, Prior: 0.5}, {Tool: 1, Sem: 0.7, Prior: 1}, {Tool: 2, Sem: 0.2, Prior: 0}, {Tool: 3, Sem: 0.1, Prior: 0.2}},
		Excluded: []bool{false, false, false, true}}
	w := FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}
	// ε-greedy around static (the first allowed candidate): 0.3/3 each, +0.7 on position 0.
	eps, err := New(Spec{Name: "e", Kind: "static", Explore: &ExploreConfig{Kind: ExploreEpsilonGreedy, Epsilon: 0.3}}, Env{NumTools: 4, Weights: w, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// Softmax around prior_only: scores 0.75·sem + 0.10·prior = 0.725, 0.625, 0.15 at τ = 0.1.
	soft, err := New(Spec{Name: "s", Kind: "prior_only", Explore: &ExploreConfig{Kind: ExploreSoftmax, Temperature: 0.1}}, Env{NumTools: 4, Weights: w, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	z := math.Exp(0) + math.Exp(-1) + math.Exp(-5.75)
	for _, c := range []struct {
		p    Policy
		want []float64
	}{
		{eps, []float64{0.1 + 0.7, 0.1, 0.1, 0}},
		{soft, []float64{1 / z, math.Exp(-1) / z, math.Exp(-5.75) / z, 0}},
	} {
		counts := make([]float64, 4)
		const draws = 20000
		got := make([]float64, 4)
		for range draws {
			pos := c.p.Choose(s)
			counts[pos]++
			c.p.(Stochastic).Propensities(s, got)
			for i := range got {
				if math.Abs(got[i]-c.want[i]) > 1e-12 {
					t.Fatalf("%s: propensities %v, want %v", c.p.Name(), got, c.want)
				}
			}
		}
		for i, q := range c.want {
			sd := math.Sqrt(q * (1 - q) / draws)
			if math.Abs(counts[i]/draws-q) > 5*sd+1e-9 {
				t.Fatalf("%s: position %d drawn %.4f of the time, want %.4f", c.p.Name(), i, counts[i]/draws, q)
			}
		}
		r := Rank(c.p, s)
		if !r.Explores || r.Parts == nil && c.p.Name() == "s" || len(r.Order) != 3 {
			t.Fatalf("%s: rank %+v", c.p.Name(), r)
		}
	}
}

func TestExploreValidation(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "a", Kind: "static", Explore: &ExploreConfig{Kind: ExploreSoftmax, Temperature: 1}}, "needs a policy with scores"},
		{Spec{Name: "a", Kind: "static", Explore: &ExploreConfig{Kind: ExploreEpsilonGreedy}}, "epsilon = 0"},
		{Spec{Name: "a", Kind: "batch_grpo", Explore: &ExploreConfig{Kind: ExploreEpsilonGreedy, Epsilon: 0.1}}, "cannot be wrapped"},
		{Spec{Name: "a", Kind: "rated", Gamma: 0.9, Explore: &ExploreConfig{Kind: "boltzmann"}}, "must be epsilon_greedy or softmax"},
	} {
		if err := c.spec.Validate("p"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec.Explore, err, c.want)
		}
	}
}

// fixedParts is an inner policy with given scores and masks, choosing as Choose's rule does.
type fixedParts struct{ parts []Parts }

func (f fixedParts) Name() string                          { return "fixed" }
func (f fixedParts) Choose(s *Step) int                    { return 1 }
func (f fixedParts) Observe(s *Step, pos int, fb Feedback) {}
func (f fixedParts) Explain(s *Step, out []Parts)          { copy(out, f.parts) }

// TestSoftmaxLeavesMaskedToolsOut: a tool a health check masks gets no probability while
// another is unmasked, as the inner policy would never choose it; it had e^((0.72−0.5)/0.05)
// times the next one's (0.93 of the mass). With every candidate masked the softmax is over all.
func TestSoftmaxLeavesMaskedToolsOut(t *testing.T) {
	s := &Step{Candidates: []Candidate{{Tool: 0}, {Tool: 1}, {Tool: 2}}, Excluded: []bool{false, false, false}}
	cfg := ExploreConfig{Kind: ExploreSoftmax, Temperature: 0.05}
	p := NewExploring(fixedParts{[]Parts{{Score: 0.72, Masked: true}, {Score: 0.5}, {Score: 0.45}}}, cfg, 1)
	got := make([]float64, 3)
	p.Distribution(s, got)
	z := 1 + math.Exp(-0.05/0.05)
	if want := []float64{0, 1 / z, math.Exp(-1) / z}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-12 || math.Abs(got[2]-want[2]) > 1e-12 {
		t.Fatalf("distribution %v, want %v", got, want)
	}
	all := NewExploring(fixedParts{[]Parts{{Score: 0.72, Masked: true}, {Score: 0.5, Masked: true}, {Score: 0.45, Masked: true}}}, cfg, 1)
	all.Distribution(s, got)
	z = 1 + math.Exp(-0.22/0.05) + math.Exp(-0.27/0.05)
	if math.Abs(got[0]-1/z) > 1e-12 {
		t.Fatalf("every candidate masked: %v, want %v first", got, 1/z)
	}
}
