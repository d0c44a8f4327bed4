package sim

import (
	"context"
	"fmt"
	"sync"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
)

// GridSpec is the whole dynamic experiment: every policy under every scenario for every seed.
type GridSpec struct {
	Scenarios []Scenario
	// Protocols are the feedback protocols; every policy runs under each (default: the
	// paper's execution protocol alone).
	Protocols []Protocol
	Policies  []bandit.Spec
	Seeds     []uint64
	Steps     int
	K         int
	Weights   bandit.FusionWeights
	// Summary is the window of Post-Fail SR and FSR (paper: steps 2,001–5,000 → [2000, 5000)).
	Summary metrics.Window
	// ASWindow is the rolling window of adaptation steps (paper: 200).
	ASWindow int
	// CurveStride keeps every CurveStride-th point of the rolling SR for plots.
	CurveStride int
	// Loggers, when set, opens the decision log of each run; close is called when it ends.
	Loggers func(protocol, scenario, policy string, seed uint64) (log StepLogger, close func() error, err error)
}

// RunResult is the outcome of one (scenario, policy, seed) run.
type RunResult struct {
	Protocol        string
	Scenario        string
	Policy          string
	Seed            uint64
	PostFailSR      float64
	FSR             float64
	PreFailSR       float64
	AttemptsPerStep float64
	// SRPerAttempt is Post-Fail SR divided by attempts per step: successes per execution.
	SRPerAttempt float64
	AS           metrics.Adaptation
	// Curve is the rolling SR (ASWindow wide) sampled every CurveStride steps.
	Curve []float64
}

// RunGrid runs the grid on workers goroutines. Each seed fixes one stream and one schedule per
// scenario shared by all policies, so policies are compared on identical conditions. progress,
// if not nil, is called after each finished run, never concurrently.
func RunGrid(ctx context.Context, w *World, g GridSpec, workers int, progress func()) ([]RunResult, error) {
	if len(g.Protocols) == 0 {
		g.Protocols = []Protocol{{Name: ProtocolExecution, Kind: ProtocolExecution}}
	}
	type job struct{ proto, sc, pol, seed int }
	type prepared struct {
		stream []int
		scheds []*Schedule
	}
	preps := make([]prepared, len(g.Seeds))
	rel := w.Relevance()
	for si, seed := range g.Seeds {
		stream := Stream(len(w.Queries), g.Steps, seed)
		freq := StreamFrequency(w.NumTools, stream, rel)
		p := prepared{stream: stream}
		for _, sc := range g.Scenarios {
			p.scheds = append(p.scheds, NewSchedule(sc, w, freq, seed))
		}
		preps[si] = p
	}
	jobs := make(chan job)
	results := make([]RunResult, len(g.Protocols)*len(g.Scenarios)*len(g.Policies)*len(g.Seeds))
	index := func(j job) int {
		return ((j.proto*len(g.Scenarios)+j.sc)*len(g.Policies)+j.pol)*len(g.Seeds) + j.seed
	}
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < max(1, workers); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := runOne(w, g, preps[j.seed].stream, preps[j.seed].scheds[j.sc], j.proto, j.sc, j.pol, j.seed)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				results[index(j)] = r
				if progress != nil {
					progress() // under mu: callers may count without locking
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for proto := range g.Protocols {
		for sc := range g.Scenarios {
			for pol := range g.Policies {
				for seed := range g.Seeds {
					select {
					case jobs <- job{proto, sc, pol, seed}:
					case <-ctx.Done():
						break feed
					}
				}
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return results, firstErr
}

func runOne(w *World, g GridSpec, stream []int, sched *Schedule, proto, sc, pol, seedIdx int) (RunResult, error) {
	protocol, scenario, spec, seed := g.Protocols[proto], g.Scenarios[sc], g.Policies[pol], g.Seeds[seedIdx]
	p, err := NewPolicy(spec, bandit.Env{NumTools: w.NumTools, Dim: w.Dim, Weights: g.Weights, Seed: seed, Providers: w.Providers})
	if err != nil {
		return RunResult{}, err
	}
	r := RunResult{Protocol: protocol.Name, Scenario: scenario.Name, Policy: spec.Name, Seed: seed}
	var log StepLogger
	closeLog := func() error { return nil }
	if g.Loggers != nil {
		if log, closeLog, err = g.Loggers(protocol.Name, scenario.Name, spec.Name, seed); err != nil {
			return r, err
		}
	}
	trace, err := RunLogged(w, stream, sched, p, g.K, spec.AttemptBudget(), protocol, seed, log)
	if cerr := closeLog(); err == nil {
		err = cerr
	}
	if err != nil {
		return r, fmt.Errorf("decision log of protocol %s, scenario %s, policy %s, seed %d: %w", protocol.Name, scenario.Name, spec.Name, seed, err)
	}
	onset := scenario.Onset()
	fail := func(err error) (RunResult, error) {
		return r, fmt.Errorf("protocol %s, scenario %s, policy %s, seed %d: %w", protocol.Name, scenario.Name, spec.Name, seed, err)
	}
	if r.PostFailSR, err = metrics.SuccessRate(trace, g.Summary); err != nil {
		return fail(err)
	}
	if r.FSR, err = metrics.FailedSelectionRate(trace, g.Summary); err != nil {
		return fail(err)
	}
	if r.AttemptsPerStep, err = metrics.AttemptsPerStep(trace, g.Summary); err != nil {
		return fail(err)
	}
	if r.AttemptsPerStep > 0 {
		r.SRPerAttempt = r.PostFailSR / r.AttemptsPerStep
	}
	if r.PreFailSR, err = metrics.SuccessRate(trace, metrics.Window{From: 0, To: onset}); err != nil {
		return fail(err)
	}
	if r.AS, err = metrics.AdaptationSteps(trace, onset, g.ASWindow, scenario.Theta); err != nil {
		return fail(err)
	}
	rolling := metrics.RollingSuccessRate(trace, g.ASWindow)
	stride := max(1, g.CurveStride)
	for t := 0; t < len(rolling); t += stride {
		r.Curve = append(r.Curve, rolling[t])
	}
	return r, nil
}

// Row aggregates one (scenario, policy) over seeds.
type Row struct {
	Protocol        string          `json:"protocol"`
	Scenario        string          `json:"scenario"`
	FailureRate     float64         `json:"failure_rate"`
	Method          string          `json:"method"`
	PostFailSR      metrics.Summary `json:"post_fail_sr"`
	FSR             metrics.Summary `json:"fsr"`
	PreFailSR       metrics.Summary `json:"pre_fail_sr"`
	AttemptsPerStep metrics.Summary `json:"attempts_per_step"`
	SRPerAttempt    metrics.Summary `json:"sr_per_attempt"`
	AS              ASSummary       `json:"as"`
	Seeds           int             `json:"seeds"`
	// Curve is the seed-averaged rolling SR, for plots.
	Curve []float64 `json:"-"`
}

// ASSummary is the adaptation steps over seeds: the mean over the runs that recovered, and how
// many runs never did (the paper's "Failed").
type ASSummary struct {
	Mean       float64 `json:"mean"`
	CI95       float64 `json:"ci95"`
	FailedRuns int     `json:"failed_runs"`
}

// Summarize groups results by (protocol, scenario, policy) in grid order.
func Summarize(g GridSpec, results []RunResult) []Row {
	var rows []Row
	n := len(g.Seeds)
	for i := 0; i+n <= len(results); i += n {
		runs := results[i : i+n]
		sc := scenarioNamed(g.Scenarios, runs[0].Scenario)
		var sr, fsr, pre, aps, spa, as []float64
		row := Row{Protocol: runs[0].Protocol, Scenario: sc.Name, FailureRate: sc.FailureRate, Method: runs[0].Policy, Seeds: n}
		for _, r := range runs {
			sr = append(sr, r.PostFailSR)
			fsr = append(fsr, r.FSR)
			pre = append(pre, r.PreFailSR)
			aps = append(aps, r.AttemptsPerStep)
			spa = append(spa, r.SRPerAttempt)
			if r.AS.Recovered {
				as = append(as, float64(r.AS.Steps))
			} else {
				row.AS.FailedRuns++
			}
			if row.Curve == nil {
				row.Curve = make([]float64, len(r.Curve))
			}
			for j, v := range r.Curve {
				row.Curve[j] += v / float64(n)
			}
		}
		row.PostFailSR, row.FSR = metrics.MeanCI95(sr), metrics.MeanCI95(fsr)
		row.PreFailSR, row.AttemptsPerStep = metrics.MeanCI95(pre), metrics.MeanCI95(aps)
		row.SRPerAttempt = metrics.MeanCI95(spa)
		if len(as) > 0 {
			s := metrics.MeanCI95(as)
			row.AS.Mean, row.AS.CI95 = s.Mean, s.CI95
		}
		rows = append(rows, row)
	}
	return rows
}

func scenarioNamed(scs []Scenario, name string) Scenario {
	for _, s := range scs {
		if s.Name == name {
			return s
		}
	}
	return Scenario{Name: name}
}
