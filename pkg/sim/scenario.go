// Package sim is the failure-injection environment of the dynamic experiment: an evaluation
// stream of queries, failure schedules described as data (persistent failures as in the paper,
// transient outages, flapping and flaky tools, tools added mid-stream), and the step loop that
// lets a policy choose, executes its choice and reports only that outcome back.
package sim

import (
	"fmt"
	"math"
	"sort"
)

// Scenario is one failure schedule, loaded from YAML.
type Scenario struct {
	Name string `yaml:"name" json:"name"`
	// FailureRate is the ρ shown in the tables (informational; events carry the real fractions).
	FailureRate float64 `yaml:"failure_rate" json:"failure_rate"`
	// Theta is the adaptation-steps threshold θ (paper: 0.9 at ρ = 20%, 0.8 at 30%).
	Theta  float64 `yaml:"theta" json:"theta"`
	Events []Event `yaml:"events" json:"events"`
}

// Event kinds.
const (
	// EventPersistent: selected tools fail from Start to the end of the run (the paper).
	EventPersistent = "persistent"
	// EventTransient: selected tools fail from Start until End, then recover.
	EventTransient = "transient"
	// EventFlapping: selected tools alternate Period steps down, Period steps up, from Start
	// until End (0: to the end of the run), and are up from End on.
	EventFlapping = "flapping"
	// EventFlaky: from Start, each call of a selected tool succeeds with probability SuccessProb.
	EventFlaky = "flaky"
	// EventNewTools: selected tools do not exist before Start (cold start when they appear).
	EventNewTools = "new_tools"
)

// Event applies one kind of change to a selection of tools.
type Event struct {
	Kind        string   `yaml:"kind" json:"kind"`
	Start       int      `yaml:"start" json:"start"`
	End         int      `yaml:"end,omitempty" json:"end,omitempty"`
	Period      int      `yaml:"period,omitempty" json:"period,omitempty"`
	SuccessProb float64  `yaml:"success_prob,omitempty" json:"success_prob,omitempty"`
	Select      Selector `yaml:"select" json:"select"`
}

// Selector picks the tools an event affects.
type Selector struct {
	// By is "frequency" (the paper: tools sorted by how often they are relevant in the stream,
	// most frequent first) or "random" (seeded).
	By string `yaml:"by" json:"by"`
	// SkipTop is the share of the catalog skipped from the top of the order (paper: 0.10).
	SkipTop float64 `yaml:"skip_top" json:"skip_top"`
	// Fraction is the share of the catalog selected after the skipped ones (paper: ρ).
	Fraction float64 `yaml:"fraction" json:"fraction"`
	// Unit is "tool" (default: tools are selected one by one) or "provider": whole providers
	// (tools sharing an endpoint host or an n8n node) are selected until Fraction of the
	// catalog is covered, so a provider outage takes down all its tools at once.
	Unit string `yaml:"unit,omitempty" json:"unit,omitempty"`
	// Among is the set SkipTop and Fraction are shares of: "catalog" (default, the paper: N is
	// the catalog size) or "relevant" (N is the number of tools relevant to at least one query
	// of the stream, and only those can be selected). On a large corpus of which a stream
	// needs few tools, the paper's rule skips every relevant tool (SkipTop·N exceeds their
	// number) and fails only tools no query needs; "relevant" makes the failures hit the tools
	// the stream uses. Tool unit only.
	Among string `yaml:"among,omitempty" json:"among,omitempty"`
}

// Selector units.
const (
	UnitTool     = "tool"
	UnitProvider = "provider"
)

// Selector populations (Selector.Among).
const (
	AmongCatalog  = "catalog"
	AmongRelevant = "relevant"
)

// Validate checks a scenario against the run length; key locates it in the config.
func (s Scenario) Validate(key string, steps int) error {
	if s.Name == "" {
		return fmt.Errorf("%s.name: a scenario needs a name", key)
	}
	if !(s.Theta > 0 && s.Theta <= 1) {
		return fmt.Errorf("%s.theta = %v: must be in (0, 1]", key, s.Theta)
	}
	if len(s.Events) == 0 {
		return fmt.Errorf("%s.events: a scenario needs at least one event", key)
	}
	for i, e := range s.Events {
		ek := fmt.Sprintf("%s.events[%d]", key, i)
		switch e.Kind {
		case EventPersistent, EventNewTools:
		case EventTransient:
			if e.End <= e.Start {
				return fmt.Errorf("%s.end = %d: a transient outage must end after its start %d", ek, e.End, e.Start)
			}
		case EventFlapping:
			if e.Period <= 0 {
				return fmt.Errorf("%s.period = %d: must be > 0", ek, e.Period)
			}
			if e.End != 0 && e.End <= e.Start {
				return fmt.Errorf("%s.end = %d: flapping must end after its start %d (0: never)", ek, e.End, e.Start)
			}
		case EventFlaky:
			// 0 is also what a missing success_prob reads as: a flaky tool that never succeeds
			// is a persistent failure, and was run as one without a word.
			if !(e.SuccessProb > 0 && e.SuccessProb <= 1) {
				return fmt.Errorf("%s.success_prob = %v: a flaky tool succeeds with a probability in (0, 1] (missing reads as 0; kind persistent is a tool that never does)", ek, e.SuccessProb)
			}
		default:
			return fmt.Errorf("%s.kind: unknown event %q (persistent, transient, flapping, flaky, new_tools)", ek, e.Kind)
		}
		// Keys of another kind were ignored: a persistent event with an end never ended.
		switch {
		case e.End != 0 && e.Kind != EventTransient && e.Kind != EventFlapping:
			return fmt.Errorf("%s.end = %d: a %s event has no end (transient and flapping do)", ek, e.End, e.Kind)
		case e.Period != 0 && e.Kind != EventFlapping:
			return fmt.Errorf("%s.period = %d: only a flapping event has a period, not %s", ek, e.Period, e.Kind)
		case e.SuccessProb != 0 && e.Kind != EventFlaky:
			return fmt.Errorf("%s.success_prob = %v: only a flaky event has a success probability, not %s", ek, e.SuccessProb, e.Kind)
		}
		if e.Start < 0 || e.Start >= steps {
			return fmt.Errorf("%s.start = %d: must be in [0, %d)", ek, e.Start, steps)
		}
		if e.Select.By != "frequency" && e.Select.By != "random" {
			return fmt.Errorf("%s.select.by: %q is not \"frequency\" or \"random\"", ek, e.Select.By)
		}
		if u := e.Select.Unit; u != "" && u != UnitTool && u != UnitProvider {
			return fmt.Errorf("%s.select.unit: %q is not %q or %q", ek, u, UnitTool, UnitProvider)
		}
		if e.Select.Unit == UnitProvider && e.Kind == EventNewTools {
			return fmt.Errorf("%s.select.unit: new_tools selects tools, not providers", ek)
		}
		if a := e.Select.Among; a != "" && a != AmongCatalog && a != AmongRelevant {
			return fmt.Errorf("%s.select.among: %q is not %q or %q", ek, a, AmongCatalog, AmongRelevant)
		}
		if e.Select.Among == AmongRelevant && e.Select.Unit == UnitProvider {
			return fmt.Errorf("%s.select.among: %q works with unit tool, not provider", ek, AmongRelevant)
		}
		if e.Select.Fraction < 0 || e.Select.Fraction >= 1 || math.IsNaN(e.Select.Fraction) {
			return fmt.Errorf("%s.select.fraction = %v: ρ must be in [0, 1)", ek, e.Select.Fraction)
		}
		if e.Select.SkipTop < 0 || e.Select.SkipTop+e.Select.Fraction > 1 {
			return fmt.Errorf("%s.select.skip_top = %v: must be >= 0 with skip_top + fraction <= 1", ek, e.Select.SkipTop)
		}
	}
	return nil
}

// Onset is the failure onset used by the metrics: the earliest start of an event that makes
// tools fail (tools that appear, new_tools, are no failure: with tools appearing at 1,000 and
// failing at 3,000, the pre-failure SR and the adaptation were measured from 1,000), or of any
// event when the scenario has only new tools.
func (s Scenario) Onset() int {
	onset, any := math.MaxInt, math.MaxInt
	for _, e := range s.Events {
		any = min(any, e.Start)
		if e.Kind != EventNewTools {
			onset = min(onset, e.Start)
		}
	}
	if onset == math.MaxInt {
		return any
	}
	return onset
}

// Frequency is how often each tool is relevant over a stream, and the tools in that order.
type Frequency struct {
	// Order lists all tool indices, most frequently relevant first, ties by index.
	Order []int
	// Count[tool] is the number of stream steps whose query the tool is relevant to.
	Count []int
}

// Relevant is the number of tools relevant to at least one step of the stream: the first
// Relevant entries of Order.
func (f Frequency) Relevant() int {
	n := 0
	for _, c := range f.Count {
		if c > 0 {
			n++
		}
	}
	return n
}

// StreamFrequency counts, for every tool, the stream steps it is relevant to. relevant[q] lists
// the relevant tools of query q; stream holds query indices.
func StreamFrequency(numTools int, stream []int, relevant [][]int) Frequency {
	count := make([]int, numTools)
	for _, q := range stream {
		for _, tool := range relevant[q] {
			count[tool]++
		}
	}
	order := make([]int, numTools)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return count[order[a]] > count[order[b]] })
	return Frequency{Order: order, Count: count}
}

// selectTools applies a selector to an order of tools: skip round(SkipTop·N), take
// round(Fraction·N).
func selectTools(sel Selector, order []int) []int {
	n := len(order)
	skip := int(math.Round(sel.SkipTop * float64(n)))
	take := int(math.Round(sel.Fraction * float64(n)))
	if skip+take > n {
		take = n - skip
	}
	return append([]int(nil), order[skip:skip+take]...)
}
