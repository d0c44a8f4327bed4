package sim

import (
	"fmt"
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

// World is the fixed part of the environment: the catalog size, the tools' providers and the
// prepared queries.
type World struct {
	NumTools int
	Dim      int
	Queries  []Query
	// Providers[tool] is the tool's provider index (tools sharing an endpoint host or an n8n
	// node; a tool with neither is a provider of its own). nil: every tool its own provider.
	Providers []int
	// ProviderNames names each provider index (for reports).
	ProviderNames []string
	// Calibrator, when set, gives every step's candidates their Relevance, P(relevant |
	// retrieval features), from their scores and ranks in that step's list.
	Calibrator *bandit.Calibrator
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

// Relevance lists each query's relevant tools, as StreamFrequency wants them.
func (w *World) Relevance() [][]int {
	r := make([][]int, len(w.Queries))
	for i, q := range w.Queries {
		r[i] = q.Relevant
	}
	return r
}

// providerOf returns tool's provider index, the tool itself when the world has no providers.
func (w *World) providerOf(tool int) int {
	if w.Providers == nil {
		return tool
	}
	return w.Providers[tool]
}

// numProviders is the number of provider indices.
func (w *World) numProviders() int {
	if w.Providers == nil {
		return w.NumTools
	}
	n := 0
	for _, p := range w.Providers {
		n = max(n, p+1)
	}
	return n
}

// Protocol kinds: what a policy observes after each execution.
const (
	// ProtocolExecution is the paper's: only whether the tool ran (1) or failed (0).
	ProtocolExecution = "execution"
	// ProtocolTask adds the true task success: the tool ran and served the query.
	ProtocolTask = "task"
	// ProtocolJudged adds task success as a judge reports it, with false-positive and
	// false-negative rates (an LLM judge, say).
	ProtocolJudged = "judged"
)

// Protocol is one feedback protocol of the grid.
type Protocol struct {
	Name string `yaml:"name" json:"name"`
	Kind string `yaml:"kind" json:"kind"`
	// FalsePositive is P(judge says success | the executed tool did not serve the query) and
	// FalseNegative P(judge says failure | it did), for kind judged.
	FalsePositive float64 `yaml:"false_positive,omitempty" json:"false_positive,omitempty"`
	FalseNegative float64 `yaml:"false_negative,omitempty" json:"false_negative,omitempty"`
}

// Validate checks the protocol; key locates it in error messages.
func (p Protocol) Validate(key string) error {
	if p.Name == "" {
		return fmt.Errorf("%s.name: a protocol needs a name", key)
	}
	switch p.Kind {
	case ProtocolExecution, ProtocolTask:
		if p.FalsePositive != 0 || p.FalseNegative != 0 {
			return fmt.Errorf("%s: false_positive and false_negative apply to kind judged only", key)
		}
	case ProtocolJudged:
		for name, v := range map[string]float64{"false_positive": p.FalsePositive, "false_negative": p.FalseNegative} {
			if !(v >= 0 && v < 1) {
				return fmt.Errorf("%s.%s = %v: must be in [0, 1)", key, name, v)
			}
		}
	default:
		return fmt.Errorf("%s.kind = %q: must be %s, %s or %s", key, p.Kind, ProtocolExecution, ProtocolTask, ProtocolJudged)
	}
	return nil
}

// feedback is what the protocol lets a policy observe of one execution at (t, attempt).
func (p Protocol) feedback(executed, relevant bool, seed uint64, t, attempt int) bandit.Feedback {
	fb := bandit.Feedback{Executed: executed}
	switch p.Kind {
	case ProtocolTask:
		fb.TaskKnown, fb.Task = true, executed && relevant
	case ProtocolJudged:
		fb.TaskKnown, fb.Task = true, executed && relevant
		if executed { // a failed call is plain to see; the judge reads the output of one that ran
			u := uniform(seed^0x6a7564676521, uint64(t), uint64(attempt))
			if relevant && u < p.FalseNegative {
				fb.Task = false
			} else if !relevant && u < p.FalsePositive {
				fb.Task = true
			}
		}
	}
	return fb
}

// Run plays one policy over a stream: at each step the policy sees the top-k existing
// candidates and chooses one to execute; after a failed execution it may choose again, up to
// budget executions per step. It learns from each execution what the protocol shows. The step
// succeeds (SR) when the tool that executed is relevant to the query. seed drives the judge.
func Run(w *World, stream []int, sched *Schedule, pol bandit.Policy, k, budget int, proto Protocol, seed uint64) []metrics.StepOutcome {
	trace := make([]metrics.StepOutcome, len(stream))
	cands := make([]bandit.Candidate, 0, k)
	excluded := make([]bool, k)
	step := &bandit.Step{}
	orc, _ := pol.(*oracle)
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
		if w.Calibrator != nil {
			w.Calibrator.Apply(cands)
		}
		clear(excluded)
		*step = bandit.Step{T: t, Context: q.Context, Candidates: cands, Excluded: excluded[:len(cands)]}
		if orc != nil {
			orc.see(cands, q, sched, t)
		}
		out := &trace[t]
		for a := 0; a < budget && a < len(cands); a++ {
			step.Attempt = a
			pos := pol.Choose(step)
			tool := cands[pos].Tool
			ok := sched.Executes(tool, t)
			relevant := contains(q.Relevant, tool)
			out.Attempts++
			if !ok {
				out.FailedAttempts++
			}
			pol.Observe(step, pos, proto.feedback(ok, relevant, seed, t, a))
			excluded[pos] = true
			if ok {
				out.Success = relevant
				break
			}
		}
	}
	return trace
}

// oracle is an upper bound that sees the schedule (and, for oracle_task, the relevance labels):
// it picks the best-ranked candidate that will execute (oracle_task: that will also serve the
// query, when one will). It is labelled as a bound in every table: no policy that learns from
// feedback can see this.
type oracle struct {
	label    string
	task     bool
	executes []bool
	relevant []bool
}

// see gives the oracle the truth about step t's candidates.
func (o *oracle) see(cands []bandit.Candidate, q *Query, sched *Schedule, t int) {
	o.executes, o.relevant = o.executes[:0], o.relevant[:0]
	for _, c := range cands {
		o.executes = append(o.executes, sched.Executes(c.Tool, t))
		o.relevant = append(o.relevant, contains(q.Relevant, c.Tool))
	}
}

// Name implements bandit.Policy.
func (o *oracle) Name() string { return o.label }

// Choose implements bandit.Policy.
func (o *oracle) Choose(s *bandit.Step) int {
	best, bestRank := -1, 3
	for i := range s.Candidates {
		if !s.Allowed(i) {
			continue
		}
		rank := 2 // will fail
		if o.executes[i] {
			rank = 1
			if o.task && o.relevant[i] {
				rank = 0
			}
		}
		if rank < bestRank {
			best, bestRank = i, rank
		}
	}
	return max(best, 0)
}

// Observe implements bandit.Policy; an oracle needs no feedback.
func (o *oracle) Observe(*bandit.Step, int, bandit.Feedback) {}

// NewPolicy builds the policy of spec: the simulator's oracles here, every other kind by
// bandit.New.
func NewPolicy(spec bandit.Spec, env bandit.Env) (bandit.Policy, error) {
	switch spec.Kind {
	case "oracle_availability":
		return &oracle{label: spec.Name}, nil
	case "oracle_task":
		return &oracle{label: spec.Name, task: true}, nil
	}
	return bandit.New(spec, env)
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
