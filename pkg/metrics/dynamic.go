// Package metrics holds the evaluation measures of rated as pure functions: the dynamic
// failure-injection measures of the paper (Post-Fail SR, FSR, adaptation steps), offline IR
// measures, latency percentiles and confidence intervals.
package metrics

import (
	"fmt"
	"sort"
)

// StepOutcome is what happened at one step of a dynamic run.
type StepOutcome struct {
	// Success: the finally selected tool is relevant to the query and executed successfully (the
	// paper's SR condition: ground truth and Status available).
	Success bool
	// Attempts is the number of tools executed in the step (1, or up to k for retry policies).
	Attempts int
	// FailedAttempts is how many of those executions hit an unavailable tool.
	FailedAttempts int
}

// Window is a half-open range of 0-based steps [From, To).
type Window struct{ From, To int }

// check validates a window against a trace length.
func (w Window) check(n int) error {
	if w.From < 0 || w.To > n || w.From >= w.To {
		return fmt.Errorf("window [%d, %d) does not fit a trace of %d steps", w.From, w.To, n)
	}
	return nil
}

// SuccessRate is the share of steps in w whose outcome is a Success. Over the paper's summary
// window (steps 2,001–5,000, i.e. Window{2000, 5000}) it is the Post-Fail SR.
func SuccessRate(trace []StepOutcome, w Window) (float64, error) {
	if err := w.check(len(trace)); err != nil {
		return 0, err
	}
	ok := 0
	for _, s := range trace[w.From:w.To] {
		if s.Success {
			ok++
		}
	}
	return float64(ok) / float64(w.To-w.From), nil
}

// FailedSelectionRate (FSR) is the share of tool executions in w that selected an unavailable
// tool. Each attempt of a retry policy is a selection, so FSR stays comparable across policies
// that try one tool per step and those that try several.
func FailedSelectionRate(trace []StepOutcome, w Window) (float64, error) {
	if err := w.check(len(trace)); err != nil {
		return 0, err
	}
	attempts, failed := 0, 0
	for _, s := range trace[w.From:w.To] {
		attempts += s.Attempts
		failed += s.FailedAttempts
	}
	if attempts == 0 {
		return 0, nil
	}
	return float64(failed) / float64(attempts), nil
}

// AttemptsPerStep is the mean number of executions per step in w.
func AttemptsPerStep(trace []StepOutcome, w Window) (float64, error) {
	if err := w.check(len(trace)); err != nil {
		return 0, err
	}
	n := 0
	for _, s := range trace[w.From:w.To] {
		n += s.Attempts
	}
	return float64(n) / float64(w.To-w.From), nil
}

// RollingSuccessRate returns r where r[t] is the success rate over the window of `width` steps
// ending at t (steps t−width+1 … t); entries with t < width−1 are the rate over the steps so far.
func RollingSuccessRate(trace []StepOutcome, width int) []float64 {
	r := make([]float64, len(trace))
	sum := 0
	for t, s := range trace {
		if s.Success {
			sum++
		}
		if t >= width && trace[t-width].Success {
			sum--
		}
		n := width
		if t+1 < width {
			n = t + 1
		}
		r[t] = float64(sum) / float64(n)
	}
	return r
}

// Adaptation is the result of AdaptationSteps.
type Adaptation struct {
	// Steps after the first fully post-onset window until recovery; valid only if Recovered.
	Steps     int     `json:"steps"`
	Recovered bool    `json:"recovered"`
	Peak      float64 `json:"pre_failure_peak"`
	Target    float64 `json:"target"`
}

// AdaptationSteps measures how long a policy takes to recover after the failure onset.
// The pre-failure peak is the highest rolling SR (window width) over windows lying entirely before
// onset; the target is theta × peak. Recovery is the first step t ≥ onset+width−1 — the first
// window lying entirely after onset, so that no pre-failure success counts towards recovery —
// whose rolling SR reaches the target; AS = t − (onset+width−1). AS = 0 therefore means the very
// first post-failure window already meets the target (no visible drop). Never reaching it before
// the end of the trace is reported as not Recovered (the paper's "Failed").
func AdaptationSteps(trace []StepOutcome, onset, width int, theta float64) (Adaptation, error) {
	if width <= 0 || onset < width || onset+width > len(trace) {
		return Adaptation{}, fmt.Errorf("adaptation: onset %d and window %d do not fit a trace of %d steps (need width <= onset <= len-width)", onset, width, len(trace))
	}
	r := RollingSuccessRate(trace, width)
	peak := 0.0
	for t := width - 1; t < onset; t++ {
		if r[t] > peak {
			peak = r[t]
		}
	}
	a := Adaptation{Peak: peak, Target: theta * peak}
	first := onset + width - 1
	for t := first; t < len(trace); t++ {
		if r[t] >= a.Target {
			a.Steps, a.Recovered = t-first, true
			return a, nil
		}
	}
	return a, nil
}

func sortFloats(s []float64) { sort.Float64s(s) }
