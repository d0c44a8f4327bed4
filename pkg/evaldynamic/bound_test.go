package evaldynamic

import (
	"math"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/sim"
)

// TestFallbackBoundsByHand checks the Lagrangian bound on values worked out by hand.
//
// Order-keeping oracle rows: λ = 0 reached SR 0.50 at 1.5 attempts, λ = 0.1 reached 0.45 at 1.1.
// Expected-worth oracle row: λ = 0.05 reached 0.47 at 1.2.
//
//   - "retry" spends 1.2 attempts: order-keeping min(0.50 + 0·(1.2−1.5), 0.45 + 0.1·(1.2−1.1))
//     = min(0.50, 0.46) = 0.46 at λ = 0.1, gap 0.44 − 0.46 = −0.02; expected-worth
//     0.47 + 0.05·(1.2−1.2) = 0.47, gap −0.03.
//
//   - "static" spends 1.0: order-keeping min(0.50, 0.45 + 0.1·(−0.1)) = 0.44, gap 0.40 − 0.44 =
//     −0.04; expected-worth 0.47 + 0.05·(−0.2) = 0.46, gap −0.06.
//
//   - at the budget of 1.3 attempts: order-keeping min(0.50 + 0·(−0.2), 0.45 + 0.1·0.2) = 0.47
//     at λ = 0.1; expected-worth 0.47 + 0.05·0.1 = 0.475.
//
// The availability oracle is bounded by nothing (an oracle), and a run without fallback oracle
// rows has no bounds.
func TestFallbackBoundsByHand(t *testing.T) {
	cfg := &Config{
		Protocols: []sim.Protocol{{Name: "execution", Kind: "execution"}},
		Scenarios: []sim.Scenario{{Name: "flaky-20"}},
		Policies: []bandit.Spec{
			{Name: "ok0", Kind: "oracle_fallback", Attempts: 3, KeepOrder: true},
			{Name: "ok1", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: 0.1, KeepOrder: true},
			{Name: "ew", Kind: "oracle_fallback", Attempts: 3, AttemptPrice: 0.05},
			{Name: "avail", Kind: "oracle_availability"},
			{Name: "retry", Kind: "retry", K: 3},
			{Name: "static", Kind: "static"},
		},
	}
	row := func(method string, sr, attempts float64) sim.Row {
		return sim.Row{Protocol: "execution", Scenario: "flaky-20", Method: method,
			PostFailSR: metrics.Summary{Mean: sr, CI95: 0.01}, AttemptsPerStep: metrics.Summary{Mean: attempts}}
	}
	rows := []sim.Row{row("ok0", 0.50, 1.5), row("ok1", 0.45, 1.1), row("ew", 0.47, 1.2),
		row("avail", 0.6, 1), row("retry", 0.44, 1.2), row("static", 0.40, 1.0)}
	cfg.Dynamic.BoundAttempts = []float64{1.3}
	got := FallbackBounds(cfg, rows)
	want := []struct {
		policy, class     string
		bound, price, gap float64
	}{
		{"", "expected-worth", 0.475, 0.05, math.NaN()},
		{"", "order-keeping", 0.47, 0.1, math.NaN()},
		{"retry", "expected-worth", 0.47, 0.05, -0.03},
		{"retry", "order-keeping", 0.46, 0.1, -0.02},
		{"static", "expected-worth", 0.46, 0.05, -0.06},
		{"static", "order-keeping", 0.44, 0.1, -0.04},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Policy != w.policy || g.Class != w.class || math.Abs(g.Bound-w.bound) > 1e-12 || g.Price != w.price {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
		if budget := math.IsNaN(w.gap); budget != (g.Gap == nil) || budget != (g.SR == nil) ||
			(!budget && math.Abs(*g.Gap-w.gap) > 1e-12) {
			t.Errorf("row %d: SR %v, gap %v, want gap %v", i, g.SR, g.Gap, w.gap)
		}
	}
	tab := BoundTable(got)
	if len(tab.Rows) != 6 || tab.Rows[3][6] != "46.0%" || tab.Rows[3][8] != "-2.00" || tab.Rows[1][2] != "(any, at this budget)" || tab.Rows[1][8] != "—" {
		t.Errorf("table rows = %q", tab.Rows)
	}
	cfg.Policies = cfg.Policies[3:]
	if b := FallbackBounds(cfg, rows); b != nil {
		t.Errorf("bounds without fallback oracle rows: %+v", b)
	}
}
