package evaldynamic

import (
	"context"
	"testing"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/sim"
)

// BenchmarkPaperGrid times the default grid of `rated eval dynamic` (every policy of
// configs/paper.yaml × 2 failure rates × 5 seeds × 10,000 steps) on the embedded benchmark with
// BM25 and hashed contexts, world preparation excluded. Sub-benchmark "static-only" runs the
// same grid with one static policy: the reference that the full grid is compared with.
func BenchmarkPaperGrid(b *testing.B) {
	cfg, err := LoadConfig(viper.New(), nil)
	if err != nil {
		b.Fatal(err)
	}
	bn, err := defaultbench.Load()
	if err != nil {
		b.Fatal(err)
	}
	res, err := LexicalResources(bn, "default", cfg)
	if err != nil {
		b.Fatal(err)
	}
	w, _, err := BuildWorld(res, cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		policies []bandit.Spec
	}{
		{"all-policies", cfg.Policies},
		{"static-only", []bandit.Spec{{Name: "static", Kind: "static"}}},
	} {
		grid := sim.GridSpec{Scenarios: cfg.Scenarios, Policies: c.policies, Seeds: cfg.Dynamic.Seeds,
			Steps: cfg.Dynamic.Steps, K: cfg.Retrieval.K, Weights: cfg.Fusion, Summary: cfg.Summary(),
			ASWindow: cfg.Dynamic.ASWindow, CurveStride: cfg.Dynamic.CurveStride}
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := sim.RunGrid(context.Background(), w, grid, 2, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
