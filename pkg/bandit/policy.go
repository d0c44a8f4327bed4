// Package bandit holds the selection policies of the dynamic experiment and of the run-time
// router: given the retriever's top-K candidates for a query, a Policy decides which tool to
// execute, and it learns only from the outcome of the tools it executed (partial feedback).
//
// A policy is built from three seams: a relevance model (how likely a tool is to serve this
// query: the frozen retriever's calibrated score, or a contextual bandit learning from task
// feedback), a reliability layer (how likely the tool is to execute now: per-tool and
// per-provider success evidence and health-check masks), and a fusion of the two. The paper's
// own policies (RATED's discounted LinUCB, its baselines) are kept as they are, for the
// paper-faithful rows.
package bandit

import (
	"fmt"
	"math"
)

// Candidate is one retrieved tool as a policy sees it.
type Candidate struct {
	// Tool is the tool's index in the catalog (stable for the whole run; indices may grow as
	// tools are added).
	Tool int
	// Sem is the semantic score S_sem, normalised by the retriever adapter (cosine for dense
	// encoders, score / top score for lexical ones) so fusion weights mean the same thing.
	Sem float64
	// Prior is the static metadata prior r_static in [0, 1].
	Prior float64
	// Relevance is the calibrated probability that the tool serves the query, P(relevant |
	// retrieval features), from a Calibrator fitted on a dev split (0 when none was fitted).
	Relevance float64
}

// Step is one decision: the query's context vector and its candidates, best semantic match
// first. Within a step a policy may be asked for several attempts (a fallback after a failed
// execution); Excluded marks the positions already tried in this step.
type Step struct {
	T          int
	Context    []float64 // unit-norm query vector x
	Candidates []Candidate
	// Attempt counts the attempts already made in this step (0 for the first).
	Attempt int
	// Remaining is the number of attempts left in this step, this one included (0: unknown,
	// taken as 1).
	Remaining int
	// Excluded[i] is true when candidate i was already executed in this step (nil: none).
	Excluded []bool
}

// Allowed reports whether position i may still be chosen in this step.
func (s *Step) Allowed(i int) bool { return s.Excluded == nil || !s.Excluded[i] }

// Feedback is what the agent runtime observes after executing one tool.
type Feedback struct {
	// Executed: the call returned without an error or a timeout. Always observed.
	Executed bool
	// TaskKnown says that a task-success signal was observed (the "task" and "judged"
	// protocols); under the paper's "execution" protocol it is false.
	TaskKnown bool
	// Task is the observed task success (the tool executed and served the query), possibly
	// through a noisy judge. Meaningful only when TaskKnown.
	Task bool
}

// Reward is the protocol's binary reward: the observed task success when one was observed,
// else execution success (the paper's y_t).
func (f Feedback) Reward() float64 {
	ok := f.Executed
	if f.TaskKnown {
		ok = f.Task
	}
	if ok {
		return 1
	}
	return 0
}

// Succeeded reports whether Reward is 1.
func (f Feedback) Succeeded() bool { return f.Reward() == 1 }

// Policy selects tools and learns from execution feedback.
type Policy interface {
	// Name is the row label in result tables.
	Name() string
	// Choose returns the position (an index into s.Candidates) to execute next; it never
	// returns a position that s excludes, unless every position is excluded. s has at least
	// one candidate.
	Choose(s *Step) int
	// Observe reports the feedback of executing the candidate at position pos of step s.
	Observe(s *Step, pos int, fb Feedback)
}

// FusionWeights are RATED's w1 (semantic), w2 (bandit) and w3 (static prior).
type FusionWeights struct {
	Semantic float64 `yaml:"semantic" json:"semantic"`
	Bandit   float64 `yaml:"bandit" json:"bandit"`
	Prior    float64 `yaml:"prior" json:"prior"`
}

// Validate checks that the weights are non-negative and sum to 1.
func (w FusionWeights) Validate(key string) error {
	return validateWeights(key, map[string]float64{"semantic": w.Semantic, "bandit": w.Bandit, "prior": w.Prior},
		"(semantic, bandit, prior)")
}

// validateWeights checks that every weight is finite and >= 0 and that they sum to 1.
func validateWeights(key string, ws map[string]float64, names string) error {
	sum := 0.0
	for name, v := range ws {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s.%s must be a finite number >= 0, got %v", key, name, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("%s weights %s must sum to 1, got %v", key, names, sum)
	}
	return nil
}

// argmaxAllowed returns the allowed position with the largest score; ties go to the earlier
// (better-ranked) position so results are deterministic. If every position is excluded it
// returns the overall argmax.
func argmaxAllowed(s *Step, scores []float64) int {
	best := -1
	for i, v := range scores {
		if !s.Allowed(i) {
			continue
		}
		if best < 0 || v > scores[best] {
			best = i
		}
	}
	if best >= 0 {
		return best
	}
	best = 0
	for i := 1; i < len(scores); i++ {
		if scores[i] > scores[best] {
			best = i
		}
	}
	return best
}

// firstAllowed returns the first allowed position for which ok holds, else the first allowed
// position, else 0.
func firstAllowed(s *Step, ok func(i int) bool) int {
	fallback := -1
	for i := range s.Candidates {
		if !s.Allowed(i) {
			continue
		}
		if ok(i) {
			return i
		}
		if fallback < 0 {
			fallback = i
		}
	}
	return max(fallback, 0)
}

// CalibratedBefore reports whether candidate i of s comes before candidate j in the calibrated
// order (order: calibrated): by calibrated relevance, descending, ties to the better-ranked. The
// baselines and the simulator's oracles that walk that order all use this one definition.
func CalibratedBefore(s *Step, i, j int) bool {
	ri, rj := s.Candidates[i].Relevance, s.Candidates[j].Relevance
	return ri > rj || (ri == rj && i < j)
}

// firstInOrder is firstAllowed in the retriever's order, or with byRelevance in the calibrated
// order (CalibratedBefore).
func firstInOrder(s *Step, byRelevance bool, ok func(i int) bool) int {
	if !byRelevance {
		return firstAllowed(s, ok)
	}
	best, fallback := -1, -1
	for i := range s.Candidates {
		if !s.Allowed(i) {
			continue
		}
		if fallback < 0 || CalibratedBefore(s, i, fallback) {
			fallback = i
		}
		if ok(i) && (best < 0 || CalibratedBefore(s, i, best)) {
			best = i
		}
	}
	switch {
	case best >= 0:
		return best
	case fallback >= 0:
		return fallback
	}
	return 0
}

// growScores returns a slice of length n reusing buf when it is large enough.
func growScores(buf []float64, n int) []float64 {
	if cap(buf) < n {
		return make([]float64, n)
	}
	return buf[:n]
}

// grow returns s extended with zero values so that index i is valid: per-tool state grows
// with the catalog, so tools can be added while a policy runs.
func grow[T any](s []T, i int) []T {
	if i < len(s) {
		return s
	}
	n := max(i+1, 2*len(s))
	if n <= cap(s) {
		return s[:n]
	}
	out := make([]T, n)
	copy(out, s)
	return out
}
