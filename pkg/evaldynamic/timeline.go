package evaldynamic

import (
	"math"
	"reflect"
)

// scaleTimeline rescales every step-valued key (each event's start, end and period,
// dynamic.summary_from/summary_to and dynamic.as_window) from a run of `from` steps to one of
// c.Dynamic.Steps, so that `--steps N` alone gives the paper's protocol compressed or stretched
// to N steps: with the paper's 10,000 steps, --steps 1000 puts the onset at 200, the summary over
// [200, 500) and the AS window at 20. Values are rounded; windows and periods stay at least 1 and a
// transient outage still ends after it starts.
func (c *Config) scaleTimeline(from int) {
	to := c.Dynamic.Steps
	scale := func(x int) int { return int(math.Round(float64(x) * float64(to) / float64(from))) }
	d := &c.Dynamic
	d.SummaryFrom, d.SummaryTo = scale(d.SummaryFrom), min(scale(d.SummaryTo), to)
	d.ASWindow = max(1, scale(d.ASWindow))
	for i := range c.Scenarios {
		for j := range c.Scenarios[i].Events {
			e := &c.Scenarios[i].Events[j]
			start := scale(e.Start)
			if e.End != 0 {
				e.End = max(scale(e.End), start+1)
			}
			if e.Period != 0 {
				e.Period = max(1, scale(e.Period))
			}
			e.Start = start
		}
	}
}

// sameTimeline reports whether a and b agree on every step-valued key except dynamic.steps.
func sameTimeline(a, b *Config) bool {
	da, db := a.Dynamic, b.Dynamic
	return da.SummaryFrom == db.SummaryFrom && da.SummaryTo == db.SummaryTo && da.ASWindow == db.ASWindow &&
		reflect.DeepEqual(a.Scenarios, b.Scenarios)
}
