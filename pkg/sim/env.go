package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

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
	trace, _ := RunLogged(w, stream, sched, pol, k, budget, proto, seed, nil)
	return trace
}

// StepLogger receives every choice and every outcome of a run (the decision log).
type StepLogger interface {
	// Decision is called after pol chose position chosen of s (s.Attempt earlier attempts).
	Decision(q *Query, s *bandit.Step, pol bandit.Policy, chosen int) error
	// Outcome is called after the policy observed fb for position pos; served is the truth
	// (the tool executed and is relevant).
	Outcome(q *Query, s *bandit.Step, pos int, fb bandit.Feedback, served bool) error
}

// RunLogged is Run with every choice and outcome sent to log (nil: none); it stops at the first
// logging error.
func RunLogged(w *World, stream []int, sched *Schedule, pol bandit.Policy, k, budget int, proto Protocol, seed uint64, log StepLogger) ([]metrics.StepOutcome, error) {
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
			step.Attempt, step.Remaining = a, min(budget, len(cands))-a
			if a > 0 && orc != nil && orc.stop(step) {
				break
			}
			pos := pol.Choose(step)
			if log != nil {
				if err := log.Decision(q, step, pol, pos); err != nil {
					return trace, err
				}
			}
			tool := cands[pos].Tool
			ok := sched.Executes(tool, t)
			relevant := contains(q.Relevant, tool)
			out.Attempts++
			if !ok {
				out.FailedAttempts++
			}
			fb := proto.feedback(ok, relevant, seed, t, a)
			pol.Observe(step, pos, fb)
			if log != nil {
				if err := log.Outcome(q, step, pos, fb, ok && relevant); err != nil {
					return trace, err
				}
			}
			excluded[pos] = true
			if ok {
				out.Success = relevant
				break
			}
		}
	}
	return trace, nil
}

// Oracle kinds (bandit.OracleKinds): upper bounds that see the failure schedule, labelled as
// such in every table. No policy that learns from feedback can see what they see.
const (
	// OracleAvailability runs the best-ranked candidate that will execute (clairvoyant about
	// every call, flaky coins included).
	OracleAvailability = "oracle_availability"
	// OracleTask runs the best-ranked candidate that will execute and serve the query, when
	// one will, else the best-ranked that will execute.
	OracleTask = "oracle_task"
	// OracleExpected knows every tool's current success probability (not the flaky coins) and
	// ranks by calibrated relevance × that probability: a perfect reliability estimate in the
	// expected-success fusion.
	OracleExpected = "oracle_expected"
	// OracleFallback is the expected oracle with a fallback that plans: it knows every tool's
	// current success probability p (not the coins) and a relevance r (the calibrated
	// estimate, or the qrels' 0/1 with knows_relevance), and at each step tries the sequence of
	// candidates that maximises the expected success minus λ (attempt_price) per attempt,
	// stopping when the rest is not worth its price. With the qrels' relevance and its own
	// order its plan is the best any coin-blind policy can make at λ, so by Lagrangian duality
	// no such policy with A attempts per step passes min over λ of SR(λ) + λ·(A − attempts(λ)).
	// With the calibrated estimate the rows are the frontier of policies that decide by it,
	// not a bound on others: the estimate is calibrated on average, not per step.
	OracleFallback = "oracle_fallback"
	// OracleDetect is the availability oracle made to pay for detection: the first time in an
	// outage that it would run a down tool, it runs it and fails, and only then avoids it;
	// recoveries it sees for free. No causal policy detects an outage without a failed call.
	OracleDetect = "oracle_detect"
	// OracleDetectOnce pays for detection once per tool: the first time it would run a tool
	// that is down it runs it and fails, and from then on it knows that tool's outages, their
	// starts as well as their ends. It bounds the policies that cannot know a tool is down
	// before they have seen it fail once, whatever they learn from its failures afterwards (a
	// flapping tool's period included).
	OracleDetectOnce = "oracle_detect_once"
)

type oracle struct {
	label    string
	kind     string
	executes []bool
	relevant []bool
	chance   []float64
	since    []int
	paid     map[int]int // tool -> start of the outage already paid for
	price    float64     // oracle_fallback: λ per attempt
	keep     bool        // oracle_fallback: attempts in the retriever's order
	truth    bool        // oracle_fallback: plans with the qrels' relevance
	plan     []int       // oracle_fallback: this step's positions, in order
	estimate []float64   // oracle_fallback: the relevance it plans with, per position
	// byRelevance (order: calibrated): the availability and detect oracles walk the candidates
	// by calibrated relevance instead of the retriever's ranking.
	byRelevance bool
	walk        []int // this step's positions in the oracle's order
}

// positions returns s's positions in the oracle's order: the retriever's ranking, or the
// calibrated order (bandit.CalibratedBefore).
func (o *oracle) positions(s *bandit.Step) []int {
	o.walk = o.walk[:0]
	for i := range s.Candidates {
		o.walk = append(o.walk, i)
	}
	if o.byRelevance {
		// slices.SortFunc does not allocate (sort.Slice did, every step); CalibratedBefore is a
		// total order (ties by position), so the order is the same.
		slices.SortFunc(o.walk, func(a, b int) int {
			switch {
			case bandit.CalibratedBefore(s, a, b):
				return -1
			case bandit.CalibratedBefore(s, b, a):
				return 1
			}
			return 0
		})
	}
	return o.walk
}

// see gives the oracle the truth about step t's candidates.
func (o *oracle) see(cands []bandit.Candidate, q *Query, sched *Schedule, t int) {
	o.executes, o.relevant, o.chance, o.since = o.executes[:0], o.relevant[:0], o.chance[:0], o.since[:0]
	for _, c := range cands {
		p, since := sched.Chance(c.Tool, t)
		o.executes = append(o.executes, sched.Executes(c.Tool, t))
		o.relevant = append(o.relevant, contains(q.Relevant, c.Tool))
		o.chance, o.since = append(o.chance, p), append(o.since, since)
	}
}

// Name implements bandit.Policy.
func (o *oracle) Name() string { return o.label }

// Choose implements bandit.Policy.
func (o *oracle) Choose(s *bandit.Step) int {
	switch o.kind {
	case OracleFallback:
		if s.Attempt == 0 {
			relevance := o.estimate[:0]
			for i, c := range s.Candidates {
				r := c.Relevance
				if o.truth {
					r = 0
					if o.relevant[i] {
						r = 1
					}
				}
				relevance = append(relevance, r)
			}
			o.estimate = relevance
			o.plan = planAttempts(s, relevance, o.chance, o.price, max(s.Remaining, 1), o.keep, o.plan[:0])
		}
		if s.Attempt < len(o.plan) && s.Allowed(o.plan[s.Attempt]) {
			return o.plan[s.Attempt]
		}
		return firstAllowed(s)
	case OracleExpected:
		best := -1
		for i, c := range s.Candidates {
			if s.Allowed(i) && (best < 0 || c.Relevance*o.chance[i] > s.Candidates[best].Relevance*o.chance[best]) {
				best = i
			}
		}
		return max(best, 0)
	case OracleDetect, OracleDetectOnce:
		for _, i := range o.positions(s) {
			c := s.Candidates[i]
			if !s.Allowed(i) {
				continue
			}
			if o.since[i] < 0 {
				return i // up (a flaky tool counts as up: its coins are not outages)
			}
			paid, ok := o.paid[c.Tool]
			if !ok || (o.kind == OracleDetect && paid != o.since[i]) {
				o.paid[c.Tool] = o.since[i] // runs it once in this outage (once ever: detect-once), and fails
				return i
			}
		}
		for _, i := range o.walk {
			if s.Allowed(i) {
				return i
			}
		}
		return 0
	}
	best, bestRank := -1, 3
	for _, i := range o.positions(s) {
		if !s.Allowed(i) {
			continue
		}
		rank := 2 // will fail
		if o.executes[i] {
			rank = 1
			if o.kind == OracleTask && o.relevant[i] {
				rank = 0
			}
		}
		if rank < bestRank {
			best, bestRank = i, rank
		}
	}
	return max(best, 0)
}

// stop reports whether the oracle ends step s before its next attempt: oracle_fallback once its
// plan is spent; every other oracle spends the budget as any policy does.
func (o *oracle) stop(s *bandit.Step) bool {
	return o.kind == OracleFallback && s.Attempt >= len(o.plan)
}

// planAttempts returns the sequence of at most k allowed positions of s that maximises
// Σ_j Π_{i<j}(1 − p_i)·(p_j·r_j − λ), with r = relevance and p = chance per position: the
// expected success of trying them in order until one executes, less λ per attempt made. For a
// fixed set the best order is by r − λ/p, descending (swapping two neighbours a, b gains
// p_a·p_b·[(r_a − λ/p_a) − (r_b − λ/p_b)]), so the candidates are sorted by it once and every
// subset is walked in that order. keepOrder plans as Retry that knows p would: the retriever's
// ranking of the tools that can execute, stopped where the rest is not worth λ per attempt. At
// least one attempt is made.
func planAttempts(s *bandit.Step, relevance, chance []float64, lambda float64, k int, keepOrder bool, plan []int) []int {
	var allowed []int
	for i := range s.Candidates {
		if s.Allowed(i) {
			allowed = append(allowed, i)
		}
	}
	value := func(seq []int) float64 {
		v, reach := 0.0, 1.0
		for _, i := range seq {
			v += reach * (chance[i]*relevance[i] - lambda)
			reach *= 1 - chance[i]
		}
		return v
	}
	best, bestValue := plan[:0], math.Inf(-1)
	if keepOrder { // Retry that knows p: the ranking's executable tools, stopped at the best point
		var up []int
		for _, i := range allowed {
			if chance[i] > 0 {
				up = append(up, i)
			}
		}
		if len(up) == 0 {
			return append(best, allowed[0])
		}
		for n := 1; n <= min(k, len(up)); n++ {
			if v := value(up[:n]); v > bestValue {
				best, bestValue = append(best[:0], up[:n]...), v
			}
		}
		return best
	}
	index := func(i int) float64 {
		if chance[i] <= 0 {
			return math.Inf(-1)
		}
		return relevance[i] - lambda/chance[i]
	}
	sort.SliceStable(allowed, func(a, b int) bool { return index(allowed[a]) > index(allowed[b]) })
	seq := make([]int, 0, k)
	var walk func(from int)
	walk = func(from int) { // every subset of size 1..k, each in index order
		if len(seq) > 0 {
			if v := value(seq); v > bestValue {
				best, bestValue = append(best[:0], seq...), v
			}
		}
		if len(seq) == k {
			return
		}
		for j := from; j < len(allowed); j++ {
			seq = append(seq, allowed[j])
			walk(j + 1)
			seq = seq[:len(seq)-1]
		}
	}
	walk(0)
	return best
}

func firstAllowed(s *bandit.Step) int {
	for i := range s.Candidates {
		if s.Allowed(i) {
			return i
		}
	}
	return 0
}

// Observe implements bandit.Policy; an oracle needs no feedback.
func (o *oracle) Observe(*bandit.Step, int, bandit.Feedback) {}

// NewPolicy builds the policy of spec: the simulator's oracles here, every other kind by
// bandit.New.
func NewPolicy(spec bandit.Spec, env bandit.Env) (bandit.Policy, error) {
	if bandit.IsOracle(spec.Kind) {
		return &oracle{label: spec.Name, kind: spec.Kind, paid: map[int]int{}, price: spec.AttemptPrice, keep: spec.KeepOrder,
			truth: spec.KnowsRelevance, byRelevance: spec.Order == bandit.OrderCalibrated}, nil
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
