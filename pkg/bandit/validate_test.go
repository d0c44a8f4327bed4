package bandit

import (
	"math"
	"strings"
	"testing"
)

// TestSpecValidationRefusesNonFinite (issue 16): α = +Inf passed "α >= 0" and the run failed
// only when its results were encoded to JSON.
func TestSpecValidationRefusesNonFinite(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", Kind: "rated", Alpha: math.Inf(1), Gamma: 0.9}, "p.alpha"},
		{Spec{Name: "x", Kind: "global_mab", Alpha: math.Inf(1)}, "p.alpha"},
		{Spec{Name: "x", Kind: "batch_grpo", LearningRate: math.NaN()}, "p.learning_rate"},
		{Spec{Name: "x", Kind: "circuit_breaker", FailureRate: math.NaN()}, "p.failure_rate"},
	} {
		if err := c.spec.Validate("p"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
}

// TestSpecValidationTaskReliability: task_reliability reconfigures a reliability layer, so it
// needs one, must itself be valid, and belongs to factored policies only.
func TestSpecValidationTaskReliability(t *testing.T) {
	rel := &RelevanceSpec{Model: "calibrated"}
	fusion := &FusionConfig{Kind: FusionExpected}
	ok := &HealthConfig{PriorStrength: 1, PoolInit: 1}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", Kind: "factored", Relevance: rel, TaskReliability: ok, Fusion: fusion}, "p.task_reliability: needs a reliability layer"},
		{Spec{Name: "x", Kind: "factored", Relevance: rel, Reliability: ok, TaskReliability: &HealthConfig{PoolInit: 1}, Fusion: fusion}, "p.task_reliability.prior_strength"},
		{Spec{Name: "x", Kind: "static", TaskReliability: ok}, "task_reliability and fusion apply to kind factored only"},
	} {
		if err := c.spec.Validate("p"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
	if err := (Spec{Name: "x", Kind: "factored", Relevance: rel, Reliability: ok, TaskReliability: ok, Fusion: fusion}).Validate("p"); err != nil {
		t.Errorf("valid spec refused: %v", err)
	}
}

// TestSpecValidationRefusesSilentValues: each spec validated and then ran differently from what
// it says: a breaker whose rate rule can never judge (and so never opens), a negative or
// overflowing context scale, a gamma that linucb ignores, a negative UCB bonus.
func TestSpecValidationRefusesSilentValues(t *testing.T) {
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x", Kind: "circuit_breaker", FailureRate: 0.5}, "p.failure_rate = 0.5 needs a window of calls"},
		{Spec{Name: "x", Kind: "circuit_breaker", FailureRate: 0.5, Window: 10, MinCalls: 50}, "p.min_calls = 50: more than the window's 10 calls"},
		{Spec{Name: "x", Kind: "rated", Gamma: 0.9, ContextScale: -0.2}, "p.context_scale = -0.2"},
		{Spec{Name: "x", Kind: "linucb", ContextScale: 1e300}, "p.context_scale = 1e+300"},
		{Spec{Name: "x", Kind: "linucb", Gamma: 0.9}, "p.gamma = 0.9: applies to kind rated only"},
		{Spec{Name: "x", Kind: "global_mab", Alpha: -5}, "p.alpha = -5"},
		{Spec{Name: "x", Kind: "sw_ucb", Alpha: -1}, "p.alpha = -1"},
	} {
		if err := c.spec.Validate("p"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.spec, err, c.want)
		}
	}
	for _, ok := range []Spec{{Name: "x", Kind: "circuit_breaker", FailureRate: 0.5, Window: 100, MinCalls: 100}, {Name: "x", Kind: "circuit_breaker"},
		{Name: "x", Kind: "linucb", Alpha: 0.1, ContextScale: 1}} {
		if err := ok.Validate("p"); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}
