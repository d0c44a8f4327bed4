package evaldynamic

import (
	"fmt"
	"math"

	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/sim"
)

// PairedRow compares two policies on one protocol and scenario, paired over seeds: each seed
// fixes the stream and the failure schedule that both policies faced.
type PairedRow struct {
	Protocol string `json:"protocol"`
	Scenario string `json:"scenario"`
	Policy   string `json:"policy"`
	Baseline string `json:"baseline"`
	// SRDiff is Post-Fail SR of Policy minus Baseline: mean ± 95% CI over seeds.
	SRDiff metrics.Summary `json:"sr_diff"`
	// SRTest is the paired t-test of the per-seed SRs (in JSON, SRP is its p-value: null when
	// undefined, as when every difference is zero).
	SRTest  metrics.PairedTest `json:"-"`
	SRP     *float64           `json:"sr_p"`
	FSRDiff metrics.Summary    `json:"fsr_diff"`
	FSRTest metrics.PairedTest `json:"-"`
	FSRP    *float64           `json:"fsr_p"`
}

// finite returns &x, or nil for NaN and ±Inf (JSON has no such numbers).
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// Paired compares each policy named in dynamic.compare with every other policy, per protocol
// and scenario.
func Paired(cfg *Config, results []sim.RunResult) ([]PairedRow, error) {
	type key struct{ proto, sc, pol string }
	bySeed := map[key][]sim.RunResult{}
	for _, r := range results {
		k := key{r.Protocol, r.Scenario, r.Policy}
		bySeed[k] = append(bySeed[k], r)
	}
	var out []PairedRow
	for _, proto := range cfg.Protocols {
		for _, sc := range cfg.Scenarios {
			for _, name := range cfg.Dynamic.Compare {
				a := bySeed[key{proto.Name, sc.Name, name}]
				for _, other := range cfg.Policies {
					if other.Name == name {
						continue
					}
					b := bySeed[key{proto.Name, sc.Name, other.Name}]
					row := PairedRow{Protocol: proto.Name, Scenario: sc.Name, Policy: name, Baseline: other.Name}
					sa, sb, err := pairBySeed(a, b, srOf)
					if err != nil {
						return nil, fmt.Errorf("paired %s vs %s (%s, %s): %w", name, other.Name, proto.Name, sc.Name, err)
					}
					fa, fb, _ := pairBySeed(a, b, fsrOf)
					if row.SRTest, err = metrics.PairedTTest(sa, sb); err != nil {
						return nil, fmt.Errorf("paired %s vs %s (%s, %s): %w", name, other.Name, proto.Name, sc.Name, err)
					}
					if row.FSRTest, err = metrics.PairedTTest(fa, fb); err != nil {
						return nil, fmt.Errorf("paired %s vs %s (%s, %s): %w", name, other.Name, proto.Name, sc.Name, err)
					}
					row.SRDiff, row.FSRDiff = metrics.MeanCI95(diff(sa, sb)), metrics.MeanCI95(diff(fa, fb))
					row.SRP, row.FSRP = finite(row.SRTest.P), finite(row.FSRTest.P)
					out = append(out, row)
				}
			}
		}
	}
	return out, nil
}

func srOf(r sim.RunResult) float64  { return r.PostFailSR }
func fsrOf(r sim.RunResult) float64 { return r.FSR }

// pairBySeed takes one measure of two policies' runs, paired by seed (a's order): each seed
// fixes the stream and failure schedule both faced, so the differences are per seed. Runs of
// different seeds, a seed run twice, or unequal counts are an error, not a pairing by position.
func pairBySeed(a, b []sim.RunResult, f func(sim.RunResult) float64) (x, y []float64, err error) {
	if len(a) != len(b) {
		return nil, nil, fmt.Errorf("%d runs against %d: a paired test needs the same seeds", len(a), len(b))
	}
	of := make(map[uint64]sim.RunResult, len(b))
	for _, r := range b {
		if _, dup := of[r.Seed]; dup {
			return nil, nil, fmt.Errorf("seed %d run twice", r.Seed)
		}
		of[r.Seed] = r
	}
	seen := make(map[uint64]bool, len(a))
	for _, r := range a {
		other, ok := of[r.Seed]
		if !ok || seen[r.Seed] {
			return nil, nil, fmt.Errorf("seed %d has no single run to pair with", r.Seed)
		}
		seen[r.Seed] = true
		x, y = append(x, f(r)), append(y, f(other))
	}
	return x, y, nil
}

func diff(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] - b[i]
	}
	return out
}

// PairedTable lays the paired comparisons out, one row per (protocol, scenario, pair).
func PairedTable(rows []PairedRow) *report.Table {
	t := &report.Table{Title: "Paired comparisons over seeds (same stream and failure schedule per seed)",
		Columns: []string{"Feedback", "Scenario", "Policy", "vs", "ΔSR (95% CI)", "p (SR)", "ΔFSR (95% CI)", "p (FSR)"}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []string{r.Protocol, r.Scenario, r.Policy, r.Baseline,
			signedPoints(r.SRDiff), fmt.Sprintf("%.2g", r.SRTest.P), signedPoints(r.FSRDiff), fmt.Sprintf("%.2g", r.FSRTest.P)})
	}
	t.Notes = []string{"Δ in percentage points, policy minus baseline; p from the paired t-test over seeds (two-sided); NaN when every difference is zero."}
	return t
}

func signedPoints(s metrics.Summary) string {
	return fmt.Sprintf("%+.1f ± %.1f", 100*s.Mean, 100*s.CI95)
}
