// Package ope evaluates selection policies off-policy on decision logs (pkg/decisionlog, from
// `rated serve` or `rated eval dynamic`): any pkg/bandit policy spec is replayed on the logged
// decisions, and its value (the mean reward of its first choice per request) is estimated by
// replay (rejection sampling), inverse propensity scoring (IPS), self-normalised IPS and doubly
// robust, with 95% confidence intervals. docs/OPE.md says which estimator is valid on which log.
package ope

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/decisionlog"
)

// Rewards a log can be evaluated on.
const (
	// RewardAuto is the task outcome where one was reported, else the execution outcome: the
	// reward the policies learn from (bandit.Feedback.Reward).
	RewardAuto     = "auto"
	RewardExecuted = "executed"
	RewardTask     = "task"
	// RewardServed is the simulator's truth (executed and relevant), whatever the protocol
	// showed the policy.
	RewardServed = "served"
)

// Event is one first-attempt decision of the log with the outcome of its chosen tool.
type Event struct {
	ID string
	T  int64
	// Context is the policy's context vector; Candidates the logged candidates (tool indices of
	// Log.Tools) in their logged order.
	Context    []float64
	Candidates []bandit.Candidate
	// Logged is the position the logging policy chose, Propensity its probabilities per
	// position (what the log holds).
	Logged     int
	Propensity []float64
	Feedback   bandit.Feedback
	Reward     float64
}

// Log is a decision log prepared for evaluation: its events in decision order.
type Log struct {
	Events []Event
	// Tools are the tool ids by index; Providers the provider index of each (catalog.ProviderKey
	// from ReadOptions.Catalog; a tool absent from it is a provider of its own).
	Tools     []string
	Providers []int
	Dim       int
	// Policies counts the decisions per logging policy; Exploring those drawn at random.
	Policies  map[string]int
	Exploring int
	// MinPropensity is the smallest positive propensity of any candidate (replay's acceptance
	// scale).
	MinPropensity float64
	// Skipped counts decisions left out, by reason.
	Skipped map[string]int
	// TornTails lists files whose torn last line was skipped.
	TornTails []string
}

// ReadOptions configures ReadLog.
type ReadOptions struct {
	// Reward is one of RewardAuto (default), RewardExecuted, RewardTask, RewardServed.
	Reward string
	// Catalog, when given, supplies the providers of the tools (policies pool evidence by
	// provider); tools absent from it have none.
	Catalog []catalog.Tool
}

// ReadLog reads decision-log files (in order; several replicas' logs may be given together:
// decisions and outcomes are joined by id) and keeps every first-attempt decision whose chosen
// tool has an outcome, ordered by decision time (the step clock, then the wall clock).
func ReadLog(files []string, opts ReadOptions) (*Log, error) {
	var recs []decisionlog.Record
	st, err := decisionlog.ReadFiles(files, func(r decisionlog.Record) error {
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	l, err := FromRecords(recs, opts)
	if err == nil {
		l.TornTails = st.TornTails
	}
	return l, err
}

// CheckReward refuses a reward name that is none of RewardAuto, RewardExecuted, RewardTask and
// RewardServed (ReadOptions.Reward; "" is RewardAuto).
func CheckReward(reward string) error {
	switch reward {
	case "", RewardAuto, RewardExecuted, RewardTask, RewardServed:
		return nil
	}
	return fmt.Errorf("reward %q: must be %s, %s, %s or %s", reward, RewardAuto, RewardExecuted, RewardTask, RewardServed)
}

// FromRecords is ReadLog on records already read.
func FromRecords(recs []decisionlog.Record, opts ReadOptions) (*Log, error) {
	if opts.Reward == "" {
		opts.Reward = RewardAuto
	}
	if err := CheckReward(opts.Reward); err != nil {
		return nil, err
	}
	type pending struct {
		d     *decisionlog.Decision
		order int
		src   decisionlog.Record // where it was read: src.Where(), formatted only for an error
	}
	type reported struct {
		o   *decisionlog.Outcome
		src decisionlog.Record // where it was read: src.Where(), formatted only for an error
	}
	decisions := map[string]pending{}
	outcomes := map[string]reported{} // the chosen candidate's outcome per decision
	var order []string
	for _, r := range recs {
		if d := r.Decision; d != nil {
			if prev, dup := decisions[d.ID]; dup {
				return nil, fmt.Errorf("%sdecision %s appears twice (first %s)", at(r.Where()), d.ID, orInMemory(prev.src.Where()))
			}
			decisions[d.ID] = pending{d, len(order), r}
			order = append(order, d.ID)
		}
		if o := r.Outcome; o != nil && o.Chosen {
			// A report sent twice is one outcome; two that disagree leave the reward unknown.
			if prev, dup := outcomes[o.ID]; dup && !sameOutcome(prev.o, o) {
				return nil, fmt.Errorf("%sdecision %s: two outcomes of the chosen tool disagree (executed %v, task %s, served %s %s; then executed %v, task %s, served %s)",
					at(r.Where()), o.ID, prev.o.Executed, optional(prev.o.TaskSuccess), optional(prev.o.Served), orInMemory(prev.src.Where()),
					o.Executed, optional(o.TaskSuccess), optional(o.Served))
			}
			outcomes[o.ID] = reported{o, r}
		}
	}
	l := &Log{Policies: map[string]int{}, Skipped: map[string]int{}, MinPropensity: math.Inf(1), Dim: -1}
	toolIndex := map[string]int{}
	index := func(id string) int {
		i, ok := toolIndex[id]
		if !ok {
			i = len(l.Tools)
			toolIndex[id] = i
			l.Tools = append(l.Tools, id)
		}
		return i
	}
	type timed struct {
		ev    Event
		when  time.Time
		order int
	}
	var kept []timed
	var first *decisionlog.Decision
	for _, id := range order {
		p := decisions[id]
		d := p.d
		if d.Attempt > 0 {
			l.Skipped["fallback attempt (its exclusions depend on the logging policy's first choice)"]++
			continue
		}
		o := outcomes[id].o
		if o == nil {
			l.Skipped["no outcome reported for the chosen tool"]++
			continue
		}
		if d.ChosenPosition < 0 || d.ChosenPosition >= len(d.Candidates) {
			return nil, fmt.Errorf("%sdecision %s: chosen position %d of %d candidates", at(p.src.Where()), id, d.ChosenPosition, len(d.Candidates))
		}
		if first == nil {
			first = d
		} else if d.Retriever != first.Retriever || !sameRun(d.Run, first.Run) {
			return nil, fmt.Errorf("%sdecision %s is from %s, decision %s from %s: one log is one retriever and one run (give --prefix to pick a simulator run)", at(p.src.Where()), id, origin(d), first.ID, origin(first))
		}
		if o.Position != d.ChosenPosition || o.Tool != d.Chosen {
			return nil, fmt.Errorf("%sdecision %s: its chosen outcome is for %s at position %d, the decision chose %s at %d", at(p.src.Where()), id, o.Tool, o.Position, d.Chosen, d.ChosenPosition)
		}
		if d.Context == "" {
			return nil, fmt.Errorf("%sdecision %s has no context vector: the log was written without --decision-log-context, and a policy cannot be replayed without it", at(p.src.Where()), id)
		}
		ctx, err := decisionlog.DecodeContext(d.Context, d.ContextDim)
		if err != nil {
			return nil, fmt.Errorf("%sdecision %s: %w", at(p.src.Where()), id, err)
		}
		if l.Dim < 0 {
			l.Dim = d.ContextDim
		} else if d.ContextDim != l.Dim {
			return nil, fmt.Errorf("%sdecision %s: context dimension %d, earlier decisions %d (one log, one retriever)", at(p.src.Where()), id, d.ContextDim, l.Dim)
		}
		ev := Event{ID: id, T: d.T, Logged: d.ChosenPosition, Context: make([]float64, len(ctx)),
			Feedback: bandit.Feedback{Executed: o.Executed}}
		for i, v := range ctx {
			ev.Context[i] = float64(v)
		}
		sum := 0.0
		for i, c := range d.Candidates {
			if !(c.Propensity >= 0 && c.Propensity <= 1) {
				return nil, fmt.Errorf("%sdecision %s: candidate %d has propensity %v", at(p.src.Where()), id, i, c.Propensity)
			}
			sum += c.Propensity
			ev.Candidates = append(ev.Candidates, bandit.Candidate{Tool: index(c.Tool), Sem: c.Semantic, Prior: c.Prior, Relevance: c.Calibrated})
			ev.Propensity = append(ev.Propensity, c.Propensity)
		}
		if math.Abs(sum-1) > 1e-6 {
			return nil, fmt.Errorf("%sdecision %s: propensities sum to %v, not 1", at(p.src.Where()), id, sum)
		}
		if ev.Propensity[ev.Logged] <= 0 {
			return nil, fmt.Errorf("%sdecision %s: the chosen candidate has propensity %v", at(p.src.Where()), id, ev.Propensity[ev.Logged])
		}
		if o.TaskSuccess != nil {
			ev.Feedback.TaskKnown, ev.Feedback.Task = true, *o.TaskSuccess
		}
		switch opts.Reward {
		case RewardAuto:
			ev.Reward = ev.Feedback.Reward()
		case RewardExecuted:
			ev.Reward = b2f(o.Executed)
		case RewardTask:
			if o.TaskSuccess == nil {
				l.Skipped["no task outcome (reward task)"]++
				continue
			}
			ev.Reward = b2f(*o.TaskSuccess)
		case RewardServed:
			if o.Served == nil {
				return nil, fmt.Errorf("%sdecision %s: reward served needs a simulator log (outcomes with \"served\")", at(p.src.Where()), id)
			}
			ev.Reward = b2f(*o.Served)
		}
		// The replay bound is over the events kept (a skipped one is never replayed).
		for _, pr := range ev.Propensity {
			if pr > 0 {
				l.MinPropensity = math.Min(l.MinPropensity, pr)
			}
		}
		l.Policies[d.Policy]++
		if d.Explores {
			l.Exploring++
		}
		var when time.Time
		if d.Time != nil {
			when = *d.Time
		}
		kept = append(kept, timed{ev, when, p.order})
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("decision log: no first-attempt decision with an outcome of its chosen tool (skipped: %v)", l.Skipped)
	}
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.ev.T != b.ev.T {
			return a.ev.T < b.ev.T
		}
		return a.when.Before(b.when)
	})
	for _, k := range kept {
		l.Events = append(l.Events, k.ev)
	}
	providerOf := map[string]string{}
	for i := range opts.Catalog {
		providerOf[opts.Catalog[i].ID] = catalog.ProviderKey(&opts.Catalog[i])
	}
	provIndex := map[string]int{}
	for _, id := range l.Tools {
		key, ok := providerOf[id]
		if !ok {
			key = "tool:" + id // a provider of its own, as catalog.ProviderKey gives a tool without endpoints
		}
		if _, ok := provIndex[key]; !ok {
			provIndex[key] = len(provIndex)
		}
		l.Providers = append(l.Providers, provIndex[key])
	}
	return l, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// sameOutcome reports whether two reports of the chosen tool's outcome are the same report.
func sameOutcome(a, b *decisionlog.Outcome) bool {
	return a.Tool == b.Tool && a.Position == b.Position && a.Executed == b.Executed &&
		sameTask(a.TaskSuccess, b.TaskSuccess) && sameTask(a.Served, b.Served)
}

// at is "where: " for an error's prefix, or "" for a record built in memory.
func at(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// orInMemory is where, or "in memory" for a record that was not read from a file.
func orInMemory(where string) string {
	if where == "" {
		return "in memory"
	}
	return "at " + where
}

// optional prints a reported boolean, or "unreported".
func optional(b *bool) string {
	if b == nil {
		return "unreported"
	}
	return strconv.FormatBool(*b)
}

// sameTask reports whether two reported task outcomes agree (both absent, or equal).
func sameTask(a, b *bool) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameRun reports whether two decisions come from the same simulator run (both live: nil).
func sameRun(a, b *decisionlog.Run) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// origin names a decision's retriever and run for an error.
func origin(d *decisionlog.Decision) string {
	s := "retriever " + strconv.Quote(d.Retriever)
	if d.Run != nil {
		s += fmt.Sprintf(" run %s/%s seed %d", d.Run.Protocol, d.Run.Scenario, d.Run.Seed)
	}
	return s
}
