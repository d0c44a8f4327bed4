package evaldynamic

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/sim"
)

// BoundRow is the fallback oracle's bound on one policy's Post-Fail SR at the attempts per step
// that policy spent, for one protocol, scenario and oracle class.
//
// The fallback oracle at price λ maximises E[SR − λ·attempts] over its class (it knows every
// tool's success probability and plans each step's attempts). So every policy of that class
// that spends A attempts per step has SR ≤ SR(λ) − λ·attempts(λ) + λ·A for every λ, and the
// bound is the least of these over the oracle rows of the run (Lagrangian duality). A policy
// whose SR passes its bound is outside the class (it decides on other knowledge than the
// oracle's relevance, or its order is not the class's) or sits within the seeds' noise.
//
// Rows for an attempt budget of dynamic.bound_attempts name no policy: they bound every policy
// of the class that spends that many attempts per step, and carry no SR or gap.
type BoundRow struct {
	Protocol string `json:"protocol"`
	Scenario string `json:"scenario"`
	// Policy is the bounded policy's name, empty on a budget row.
	Policy   string  `json:"policy,omitempty"`
	Attempts float64 `json:"attempts_per_step"`
	// SR is the policy's Post-Fail SR (mean over seeds, and its 95% CI); nil on a budget row.
	SR     *float64 `json:"post_fail_sr,omitempty"`
	SRCI95 *float64 `json:"post_fail_sr_ci95,omitempty"`
	// Class is "order-keeping" (the retriever's order, optimal stopping) or "expected-worth"
	// (the oracle's own order of a chosen set), with ", knows relevance" when the oracle plans
	// with the qrels' relevance. Only "expected-worth, knows relevance" bounds every coin-blind
	// policy; the others bound policies that plan as they do with the same knowledge.
	Class string `json:"class"`
	// Bound is the least SR(λ) + λ·(Attempts − attempts(λ)) over the class's oracle rows, and
	// Price the λ that attains it.
	Bound float64 `json:"bound"`
	Price float64 `json:"price"`
	// Gap is SR − Bound: how far below its bound the policy stands (negative: below); nil on a
	// budget row.
	Gap *float64 `json:"gap,omitempty"`
}

// oraclePoint is one fallback oracle row: its price and the mean SR and attempts it reached.
type oraclePoint struct{ price, sr, attempts float64 }

// lagrangianBound is the least of p.sr + p.price·(attempts − p.attempts) over points, with the
// price that attains it (NaN, NaN for no points).
func lagrangianBound(points []oraclePoint, attempts float64) (bound, price float64) {
	bound, price = math.NaN(), math.NaN()
	for _, p := range points {
		b := p.sr + p.price*(attempts-p.attempts)
		if math.IsNaN(bound) || b < bound {
			bound, price = b, p.price
		}
	}
	return bound, price
}

// FallbackBounds bounds every policy of the run that is not an oracle, and every attempt budget
// of dynamic.bound_attempts, by each class of fallback oracle rows the configuration holds, per
// protocol and scenario; nil when it holds none.
func FallbackBounds(cfg *Config, rows []sim.Row) []BoundRow {
	classOf := func(p bandit.Spec) string {
		class := "expected-worth"
		if p.KeepOrder {
			class = "order-keeping"
		}
		if p.KnowsRelevance {
			class += ", knows relevance"
		}
		return class
	}
	var classes []string
	for _, p := range cfg.Policies {
		if p.Kind == "oracle_fallback" && !slices.Contains(classes, classOf(p)) {
			classes = append(classes, classOf(p))
		}
	}
	if len(classes) == 0 {
		return nil
	}
	sort.Strings(classes) // expected-worth, order-keeping: the same order in every run
	byKey := indexRows(rows)
	var out []BoundRow
	for _, proto := range cfg.Protocols {
		for _, sc := range cfg.Scenarios {
			points := map[string][]oraclePoint{}
			for _, p := range cfg.Policies {
				if r, ok := byKey[rowKey(proto.Name, sc.Name, p.Name)]; ok && p.Kind == "oracle_fallback" {
					class := classOf(p)
					points[class] = append(points[class], oraclePoint{p.AttemptPrice, r.PostFailSR.Mean, r.AttemptsPerStep.Mean})
				}
			}
			for _, a := range cfg.Dynamic.BoundAttempts {
				for _, class := range classes {
					b, price := lagrangianBound(points[class], a)
					out = append(out, BoundRow{Protocol: proto.Name, Scenario: sc.Name, Attempts: a, Class: class, Bound: b, Price: price})
				}
			}
			for _, p := range cfg.Policies {
				r, ok := byKey[rowKey(proto.Name, sc.Name, p.Name)]
				if !ok || bandit.IsOracle(p.Kind) {
					continue
				}
				for _, class := range classes {
					b, price := lagrangianBound(points[class], r.AttemptsPerStep.Mean)
					sr, ci, gap := r.PostFailSR.Mean, r.PostFailSR.CI95, r.PostFailSR.Mean-b
					out = append(out, BoundRow{Protocol: proto.Name, Scenario: sc.Name, Policy: p.Name,
						Attempts: r.AttemptsPerStep.Mean, SR: &sr, SRCI95: &ci, Class: class, Bound: b, Price: price, Gap: &gap})
				}
			}
		}
	}
	return out
}

// BoundTable lays the fallback bounds out, one row per (protocol, scenario, policy, class).
func BoundTable(rows []BoundRow) *report.Table {
	t := &report.Table{Title: "Fallback oracle bound at each policy's attempts per step",
		Columns: []string{"Feedback", "Scenario", "Policy", "attempts/step", "SR", "oracle class", "bound", "λ", "SR − bound"}}
	for _, r := range rows {
		policy, sr, gap := r.Policy, "—", "—"
		if r.SR != nil {
			sr, gap = report.PercentCI(*r.SR, *r.SRCI95), fmt.Sprintf("%+.2f", 100**r.Gap)
		} else {
			policy = "(any, at this budget)"
		}
		t.Rows = append(t.Rows, []string{r.Protocol, r.Scenario, policy, fmt.Sprintf("%.3f", r.Attempts),
			sr, r.Class, report.Percent(r.Bound), fmt.Sprintf("%g", r.Price), gap})
	}
	t.Notes = []string{
		"bound = min over the run's fallback oracle rows of the class of SR(λ) + λ·(attempts − attempts(λ)), with the means over seeds (Lagrangian duality: the oracle at λ maximises E[SR − λ·attempts] over its class, knowing each tool's success probability but not the coins).",
		"order-keeping: attempts down the retriever's ranking with optimal stopping; expected-worth: any set of candidates in the order r − λ/p, r the calibrated relevance, or the qrels' 0/1 where the class knows relevance. Only the oracle that knows relevance and chooses its own order makes the best plan of any coin-blind policy, so only its class bounds them all; a calibrated class bounds the policies that plan with the calibrated relevance, and a policy deciding otherwise (Retry) can pass it. The bound is as tight as the λ grid is fine; SR − bound in percentage points (negative: below the bound).",
	}
	return t
}
