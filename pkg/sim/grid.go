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
}

// RunResult is the outcome of one (scenario, policy, seed) run.
type RunResult struct {
	Scenario        string
	Policy          string
	Seed            uint64
	PostFailSR      float64
	FSR             float64
	PreFailSR       float64
	AttemptsPerStep float64
	AS              metrics.Adaptation
	// Curve is the rolling SR (ASWindow wide) sampled every CurveStride steps.
	Curve []float64
}

// RunGrid runs the grid on workers goroutines. Each seed fixes one stream and one schedule per
// scenario shared by all policies, so policies are compared on identical conditions. progress,
// if not nil, is called after each finished run, never concurrently.
func RunGrid(ctx context.Context, w *World, g GridSpec, workers int, progress func()) ([]RunResult, error) {
	type job struct{ sc, pol, seed int }
	type prepared struct {
		stream []int
		scheds []*Schedule
	}
	preps := make([]prepared, len(g.Seeds))
	rel := w.Relevance()
	for si, seed := range g.Seeds {
		stream := Stream(len(w.Queries), g.Steps, seed)
		order := FrequencyOrder(w.NumTools, stream, rel)
		p := prepared{stream: stream}
		for _, sc := range g.Scenarios {
			p.scheds = append(p.scheds, NewSchedule(sc, w.NumTools, order, seed))
		}
		preps[si] = p
	}
	jobs := make(chan job)
	results := make([]RunResult, len(g.Scenarios)*len(g.Policies)*len(g.Seeds))
	index := func(j job) int { return (j.sc*len(g.Policies)+j.pol)*len(g.Seeds) + j.seed }
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < max(1, workers); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, err := runOne(w, g, preps[j.seed].stream, preps[j.seed].scheds[j.sc], j.sc, j.pol, j.seed)
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
	for sc := range g.Scenarios {
		for pol := range g.Policies {
			for seed := range g.Seeds {
				select {
				case jobs <- job{sc, pol, seed}:
				case <-ctx.Done():
					break feed
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

func runOne(w *World, g GridSpec, stream []int, sched *Schedule, sc, pol, seedIdx int) (RunResult, error) {
	scenario, spec, seed := g.Scenarios[sc], g.Policies[pol], g.Seeds[seedIdx]
	p, err := bandit.New(spec, bandit.Env{NumTools: w.NumTools, Dim: w.Dim, Weights: g.Weights, Seed: seed})
	if err != nil {
		return RunResult{}, err
	}
	trace := Run(w, stream, sched, p, g.K)
	r := RunResult{Scenario: scenario.Name, Policy: spec.Name, Seed: seed}
	onset := scenario.Onset()
	fail := func(err error) (RunResult, error) {
		return r, fmt.Errorf("scenario %s, policy %s, seed %d: %w", scenario.Name, spec.Name, seed, err)
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
	Scenario        string          `json:"scenario"`
	FailureRate     float64         `json:"failure_rate"`
	Method          string          `json:"method"`
	PostFailSR      metrics.Summary `json:"post_fail_sr"`
	FSR             metrics.Summary `json:"fsr"`
	PreFailSR       metrics.Summary `json:"pre_fail_sr"`
	AttemptsPerStep metrics.Summary `json:"attempts_per_step"`
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

// Summarize groups results by (scenario, policy) in grid order.
func Summarize(g GridSpec, results []RunResult) []Row {
	var rows []Row
	n := len(g.Seeds)
	for si, sc := range g.Scenarios {
		for pi, pol := range g.Policies {
			runs := results[(si*len(g.Policies)+pi)*n : (si*len(g.Policies)+pi+1)*n]
			var sr, fsr, pre, aps, as []float64
			row := Row{Scenario: sc.Name, FailureRate: sc.FailureRate, Method: pol.Name, Seeds: n}
			for _, r := range runs {
				sr = append(sr, r.PostFailSR)
				fsr = append(fsr, r.FSR)
				pre = append(pre, r.PreFailSR)
				aps = append(aps, r.AttemptsPerStep)
				if r.AS.Recovered {
					as = append(as, float64(r.AS.Steps))
				} else {
					row.AS.FailedRuns++
				}
				if row.Curve == nil {
					row.Curve = make([]float64, len(r.Curve))
				}
				for i, v := range r.Curve {
					row.Curve[i] += v / float64(n)
				}
			}
			row.PostFailSR, row.FSR = metrics.MeanCI95(sr), metrics.MeanCI95(fsr)
			row.PreFailSR, row.AttemptsPerStep = metrics.MeanCI95(pre), metrics.MeanCI95(aps)
			if len(as) > 0 {
				s := metrics.MeanCI95(as)
				row.AS.Mean, row.AS.CI95 = s.Mean, s.CI95
			}
			rows = append(rows, row)
		}
	}
	return rows
}
