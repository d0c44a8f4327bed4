// Package bandit holds the selection policies of the dynamic experiment: given the retriever's
// top-K candidates for a query, a Policy decides which tool(s) to execute, and it learns only
// from the binary outcome of the tools it executed (partial feedback).
package bandit

import (
	"fmt"
	"math"
)

// Candidate is one retrieved tool as a policy sees it.
type Candidate struct {
	// Tool is the tool's index in the catalog (stable for the whole run).
	Tool int
	// Sem is the semantic score S_sem, normalised by the retriever adapter (cosine for dense
	// encoders, score / top score for lexical ones) so fusion weights mean the same thing.
	Sem float64
	// Prior is the static metadata prior r_static in [0, 1].
	Prior float64
}

// Step is one decision: the query's context vector and its candidates, best semantic match first.
type Step struct {
	T          int
	Context    []float64 // unit-norm query vector x
	Candidates []Candidate
}

// Policy selects tools and learns from execution feedback.
type Policy interface {
	// Name is the row label in result tables.
	Name() string
	// Choose returns the positions (indices into s.Candidates) to execute in order; execution
	// stops at the first success. It returns at least one position when there are candidates.
	Choose(s *Step) []int
	// Observe reports the outcome of executing the candidate at position pos of step s.
	Observe(s *Step, pos int, success bool)
}

// FusionWeights are RATED's w1 (semantic), w2 (bandit) and w3 (static prior).
type FusionWeights struct {
	Semantic float64 `yaml:"semantic" json:"semantic"`
	Bandit   float64 `yaml:"bandit" json:"bandit"`
	Prior    float64 `yaml:"prior" json:"prior"`
}

// Validate checks that the weights are non-negative and sum to 1.
func (w FusionWeights) Validate(key string) error {
	for name, v := range map[string]float64{"semantic": w.Semantic, "bandit": w.Bandit, "prior": w.Prior} {
		if v < 0 || math.IsNaN(v) {
			return fmt.Errorf("%s.%s must be >= 0, got %v", key, name, v)
		}
	}
	if s := w.Semantic + w.Bandit + w.Prior; math.Abs(s-1) > 1e-9 {
		return fmt.Errorf("%s weights (semantic, bandit, prior) must sum to 1, got %v", key, s)
	}
	return nil
}

// argmax returns the position of the largest score; ties go to the earlier (better-ranked)
// position so results are deterministic.
func argmax(scores []float64) int {
	best := 0
	for i := 1; i < len(scores); i++ {
		if scores[i] > scores[best] {
			best = i
		}
	}
	return best
}

// growScores returns a slice of length n reusing buf when it is large enough.
func growScores(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}
