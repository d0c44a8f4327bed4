package evallatency_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/evallatency"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// virtualFrontend "spends" a fixed time per query on a virtual clock, so the figures below are
// known in advance; a real run passes a DenseFrontend or LexicalFrontend and time.Now.
type virtualFrontend struct {
	now  *time.Time
	cost map[string]time.Duration
}

func (f virtualFrontend) Name() string { return "virtual" }

func (f virtualFrontend) Prepare(query string, k int) ([]float64, []retrieve.Candidate, error) {
	*f.now = f.now.Add(f.cost[query])
	return []float64{1}, []retrieve.Candidate{{ID: "a", Index: 0, Score: 1}, {ID: "b", Index: 1, Score: 0.5}}, nil
}

// Two warm-up queries are dropped, then the queries cycle: front-end times 1, 3, 1, 3 ms give a
// mean of 2 ms and a P95 of 3 ms (linear interpolation at rank 0.95·3 = 2.85 of 1, 1, 3, 3).
// The virtual clock does not move while the policy runs, so its overhead is 0 and its row
// (front end + policy, per query) equals the front end's.
func ExampleMeasurePipeline() {
	now := time.Unix(0, 0)
	front := virtualFrontend{now: &now, cost: map[string]time.Duration{"short": time.Millisecond, "long": 3 * time.Millisecond}}
	cfg := evallatency.Config{Queries: 4, Warmup: 2, K: 2, Seed: 1,
		Policies: []bandit.Spec{{Name: "RATED (Full)", Kind: "rated", Alpha: 0.1, Gamma: 0.95}},
		Weights:  bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10},
		Now:      func() time.Time { return now }}
	res, err := evallatency.MeasurePipeline(context.Background(), front, []string{"short", "long"}, []float64{0.5, 0.5}, cfg, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range res.Rows {
		fmt.Printf("%s: mean %.3f P95 %.3f overhead %.3f ms\n", r.Name, r.MeanMS, r.P95MS, r.OverMean)
	}
	// Output:
	// Encoding only (virtual, top-K search): mean 2.000 P95 3.000 overhead 0.000 ms
	// + RATED (Full): mean 2.000 P95 3.000 overhead 0.000 ms
}
