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
