package sim

import (
	"math/rand/v2"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
)

// Query is one evaluation query, prepared once per run grid: its relevant tools, its bandit
// context and the retriever's ranking (more than K deep, so tools that do not exist yet can be
// filtered out and K candidates still remain).
type Query struct {
	ID       string
	Relevant []int
	Context  []float64
	Ranked   []bandit.Candidate
}

// World is the fixed part of the environment: the catalog size and the prepared queries.
type World struct {
	NumTools int
	Dim      int
	Queries  []Query
}

// Stream draws the evaluation stream: steps query indices, uniformly, from a seeded generator.
func Stream(numQueries, steps int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x57e4a11))
	s := make([]int, steps)
	for i := range s {
		s[i] = rng.IntN(numQueries)
	}
	return s
}

// Relevance lists each query's relevant tools, as FrequencyOrder wants them.
func (w *World) Relevance() [][]int {
	r := make([][]int, len(w.Queries))
	for i, q := range w.Queries {
		r[i] = q.Relevant
	}
	return r
}

// Run plays one policy over a stream: at each step the policy sees the top-k existing
// candidates, chooses the tools to execute in order, and learns the outcome of each execution;
// execution stops at the first success. The step succeeds (SR) when the tool that executed is
// relevant to the query.
func Run(w *World, stream []int, sched *Schedule, pol bandit.Policy, k int) []metrics.StepOutcome {
	trace := make([]metrics.StepOutcome, len(stream))
	cands := make([]bandit.Candidate, 0, k)
	step := &bandit.Step{}
	for t, qi := range stream {
		q := &w.Queries[qi]
		cands = cands[:0]
		for _, c := range q.Ranked {
			if sched.Exists(c.Tool, t) {
				cands = append(cands, c)
				if len(cands) == k {
					break
				}
			}
		}
		if len(cands) == 0 {
			continue // nothing retrievable: a failed step with no execution
		}
		*step = bandit.Step{T: t, Context: q.Context, Candidates: cands}
		out := &trace[t]
		for _, pos := range pol.Choose(step) {
			tool := cands[pos].Tool
			ok := sched.Executes(tool, t)
			out.Attempts++
			if !ok {
				out.FailedAttempts++
			}
			pol.Observe(step, pos, ok)
			if ok {
				out.Success = contains(q.Relevant, tool)
				break
			}
		}
	}
	return trace
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
