package ope

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/metrics"
)

// Options configures Evaluate.
type Options struct {
	// Weights are the fusion weights of the paper's policies (zero: 0.75/0.15/0.10).
	Weights bandit.FusionWeights
	// Seed seeds the target policy's own draws and replay's acceptance draws.
	Seed uint64
	// Folds is the number of cross-fitting folds of the doubly robust reward model: 0 for the
	// default 2, else at least 2 (Evaluate refuses 1 and negative counts).
	Folds int
}

// Interval is an estimate with its two-sided 95% confidence interval.
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// interval is the t interval of a mean; fewer than two terms give no interval (NaN bounds),
// not a zero-width one that would read as exact.
func interval(s metrics.Summary) Interval {
	if s.N < 2 {
		return Interval{Value: s.Mean, Low: math.NaN(), High: math.NaN()}
	}
	return Interval{Value: s.Mean, Low: s.Mean - s.CI95, High: s.Mean + s.CI95}
}

// noInformation is the interval of an estimator that no event informs.
var noInformation = Interval{Value: math.NaN(), Low: math.NaN(), High: math.NaN()}

// MarshalJSON writes NaN (no estimate, no interval) as null, which JSON can carry.
func (i Interval) MarshalJSON() ([]byte, error) {
	num := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	return json.Marshal(struct {
		Value any `json:"value"`
		Low   any `json:"low"`
		High  any `json:"high"`
	}{num(i.Value), num(i.Low), num(i.High)})
}

// Contains reports whether v lies in the interval.
func (i Interval) Contains(v float64) bool { return v >= i.Low && v <= i.High }

// Estimate is one target policy's value on a log, by every estimator.
type Estimate struct {
	Policy string `json:"policy"`
	Events int    `json:"events"`
	// Logged is the logging policy's own value (the mean logged reward), for comparison.
	Logged Interval `json:"logged"`
	// Replay is the mean reward over the events replay accepted (ReplayAccepted of them): the
	// target chose the logged tool, and a draw kept the event with probability
	// MinPropensity / propensity, so accepted events are distributed as if the target had
	// chosen online (Li et al. 2011, generalised by rejection sampling). The target learns from
	// accepted events only.
	Replay         Interval `json:"replay"`
	ReplayAccepted int      `json:"replay_accepted"`
	// IPS, SNIPS, DR and DM (the direct method: the reward model alone) use the target's
	// probabilities at every event; the target learns from the events where its choice was the
	// logged one.
	IPS   Interval `json:"ips"`
	SNIPS Interval `json:"snips"`
	DR    Interval `json:"dr"`
	DM    Interval `json:"dm"`
	// ESS is the effective sample size of the importance weights, (Σw)²/Σw²; MaxWeight the
	// largest weight.
	ESS       float64 `json:"ess"`
	MaxWeight float64 `json:"max_weight"`
	// Agreement is the share of events where the target's choice was the logged one.
	Agreement float64 `json:"agreement"`
	// Unsupported counts events where the target gives probability to a candidate the logging
	// policy could not choose (propensity 0): IPS and SNIPS miss that mass there (they are
	// biased on such a log), DR fills it in from the reward model.
	Unsupported int `json:"unsupported"`
	// Rows are the per-event inputs of the estimators (cross-checks, exports).
	Rows *Rows `json:"-"`
}

// Rows are an Estimate's per-event inputs, positions padded to the log's largest candidate list.
type Rows struct {
	Action     []int       `json:"action"`
	Reward     []float64   `json:"reward"`
	Pscore     []float64   `json:"pscore"`
	ActionDist [][]float64 `json:"action_dist"`
	QHat       [][]float64 `json:"qhat"`
	// ReplayAccepted are the indices of the events replay accepted.
	ReplayAccepted []int `json:"replay_accepted"`
	// ReplayChoice is the replay pass's target choice at every event (it learns from the
	// accepted ones only, so it differs from the IPS pass's); ReplayDraw the uniform draw that
	// keeps an event when below MinPropensity / its logged propensity. With them a reference
	// can redo the acceptance itself.
	ReplayChoice  []int     `json:"replay_choice"`
	ReplayDraw    []float64 `json:"replay_draw"`
	MinPropensity float64   `json:"min_propensity"`
}

// Evaluate estimates the value of the policy spec on l.
func Evaluate(l *Log, spec bandit.Spec, opts Options) (*Estimate, error) {
	if err := spec.Validate("policy " + spec.Name); err != nil {
		return nil, err
	}
	if bandit.IsOracle(spec.Kind) {
		return nil, fmt.Errorf("policy %s: %s sees the simulator's schedule; it cannot be evaluated on a log", spec.Name, spec.Kind)
	}
	if spec.NeedsCalibration() && !hasCalibration(l) {
		return nil, fmt.Errorf("policy %s reads calibrated relevance, but every candidate of the log has calibrated 0 (the logging router had no calibrator)", spec.Name)
	}
	switch {
	case opts.Folds == 0:
		opts.Folds = 2
	case opts.Folds < 2:
		return nil, fmt.Errorf("folds %d: the doubly robust reward model needs at least 2 cross-fitting folds", opts.Folds)
	}
	if opts.Weights == (bandit.FusionWeights{}) {
		opts.Weights = bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}
	}
	env := bandit.Env{NumTools: len(l.Tools), Dim: l.Dim, Weights: opts.Weights, Seed: opts.Seed, Providers: l.Providers}
	width := 0
	for i := range l.Events {
		width = max(width, len(l.Events[i].Candidates))
	}
	qhat := RewardModel(l, opts.Folds)
	est := &Estimate{Policy: spec.Name, Events: len(l.Events), Rows: &Rows{}}
	rows := est.Rows

	// IPS, SNIPS, DR, DM: the target's probabilities at every event.
	pol, err := bandit.New(spec, env)
	if err != nil {
		return nil, err
	}
	var logged, ipsR, drR, dmR, weights []float64
	for i := range l.Events {
		ev := &l.Events[i]
		s := eventStep(ev, spec)
		dist := make([]float64, width)
		pos := choose(pol, s, dist[:len(ev.Candidates)])
		if pos == ev.Logged {
			est.Agreement++
			pol.Observe(s, pos, ev.Feedback)
		}
		w := dist[ev.Logged] / ev.Propensity[ev.Logged]
		dm := 0.0
		unsupported := false
		for a := range ev.Candidates {
			dm += dist[a] * qhat[i][a]
			unsupported = unsupported || dist[a] > 0 && ev.Propensity[a] == 0
		}
		if unsupported {
			est.Unsupported++
		}
		logged = append(logged, ev.Reward)
		weights = append(weights, w)
		ipsR = append(ipsR, w*ev.Reward)
		dmR = append(dmR, dm)
		drR = append(drR, dm+w*(ev.Reward-qhat[i][ev.Logged]))
		q := make([]float64, width)
		copy(q, qhat[i])
		rows.Action = append(rows.Action, ev.Logged)
		rows.Reward = append(rows.Reward, ev.Reward)
		rows.Pscore = append(rows.Pscore, ev.Propensity[ev.Logged])
		rows.ActionDist = append(rows.ActionDist, dist)
		rows.QHat = append(rows.QHat, q)
	}
	n := float64(len(l.Events))
	est.Agreement /= n
	est.Logged, est.IPS, est.DR, est.DM = interval(metrics.MeanCI95(logged)), interval(metrics.MeanCI95(ipsR)),
		interval(metrics.MeanCI95(drR)), interval(metrics.MeanCI95(dmR))
	est.SNIPS = snips(weights, logged)
	sw, sw2 := 0.0, 0.0
	for _, w := range weights {
		sw += w
		sw2 += w * w
		est.MaxWeight = math.Max(est.MaxWeight, w)
	}
	if sw2 > 0 {
		est.ESS = sw * sw / sw2
	} else {
		// The target never chose what the log did: every IPS term is 0 with zero variance, an
		// interval [0, 0] that would read as certain knowledge of a value no event informs.
		est.IPS = noInformation
	}

	// Replay: a fresh target that learns from the events it is shown.
	pol, err = bandit.New(spec, env)
	if err != nil {
		return nil, err
	}
	accept := rand.New(rand.NewPCG(opts.Seed, 0x7265706c6179)) // "replay"
	rows.MinPropensity = l.MinPropensity
	var accepted []float64
	dist := make([]float64, width)
	for i := range l.Events {
		ev := &l.Events[i]
		s := eventStep(ev, spec)
		pos := choose(pol, s, dist[:len(ev.Candidates)])
		u := accept.Float64() // drawn for every event, so acceptance is independent of the target
		rows.ReplayChoice = append(rows.ReplayChoice, pos)
		rows.ReplayDraw = append(rows.ReplayDraw, u)
		if pos != ev.Logged || u >= l.MinPropensity/ev.Propensity[ev.Logged] {
			continue
		}
		pol.Observe(s, pos, ev.Feedback)
		accepted = append(accepted, ev.Reward)
		rows.ReplayAccepted = append(rows.ReplayAccepted, i)
	}
	est.ReplayAccepted = len(accepted)
	est.Replay = noInformation
	if len(accepted) > 0 {
		est.Replay = interval(metrics.MeanCI95(accepted))
	}
	return est, nil
}

// eventStep is the target's view of an event: the logged context and candidates, first attempt.
func eventStep(ev *Event, spec bandit.Spec) *bandit.Step {
	return &bandit.Step{T: int(ev.T), Context: ev.Context, Candidates: ev.Candidates, Attempt: 0,
		Remaining: min(spec.AttemptBudget(), len(ev.Candidates)), Excluded: make([]bool, len(ev.Candidates))}
}

// choose asks the target for its choice and fills dist with its probabilities.
func choose(pol bandit.Policy, s *bandit.Step, dist []float64) int {
	pos := pol.Choose(s)
	if st, ok := pol.(bandit.Stochastic); ok {
		st.Propensities(s, dist)
		return pos
	}
	clear(dist)
	dist[pos] = 1
	return pos
}

// snips is Σ w·r / Σ w with the delta-method interval: the t interval of the linearised
// per-event terms w·(r − V) / mean(w), whose mean is 0. With fewer than two nonzero weights the
// value is one event's reward and every linearised term is 0, so there is no interval (the
// delta method's would have zero width).
func snips(weights, rewards []float64) Interval {
	sw, swr := 0.0, 0.0
	informed := 0
	for i, w := range weights {
		sw += w
		swr += w * rewards[i]
		if w != 0 {
			informed++
		}
	}
	if sw == 0 {
		return noInformation
	}
	v := swr / sw
	if informed < 2 {
		return Interval{Value: v, Low: math.NaN(), High: math.NaN()}
	}
	mean := sw / float64(len(weights))
	lin := make([]float64, len(weights))
	for i, w := range weights {
		lin[i] = w * (rewards[i] - v) / mean
	}
	half := metrics.MeanCI95(lin).CI95
	return Interval{Value: v, Low: v - half, High: v + half}
}

func hasCalibration(l *Log) bool {
	for i := range l.Events {
		for _, c := range l.Events[i].Candidates {
			if c.Relevance != 0 {
				return true
			}
		}
	}
	return false
}

// RewardModel is the doubly robust estimator's model of the reward of each candidate of each
// event, cross-fitted: the events are split into folds (event index mod folds) and each fold's
// estimates come from the other folds only, so no event's own reward enters its estimate. The
// model is the candidate tool's smoothed success rate, (s_tool + κ·m_pos) / (n_tool + κ), with
// κ = 2 pseudo-observations of m_pos, the smoothed mean reward of the logged choices at the
// candidate's position (which carries relevance: the retriever ranks relevant tools first).
// folds must be at least 2 (Evaluate checks Options.Folds); below that it panics.
func RewardModel(l *Log, folds int) [][]float64 {
	if folds < 2 {
		panic(fmt.Sprintf("ope.RewardModel: %d folds, want at least 2", folds))
	}
	const kappa = 2
	type stat struct{ sum, n float64 }
	out := make([][]float64, len(l.Events))
	for f := range folds {
		tools := make([]stat, len(l.Tools))
		var positions []stat
		var all stat
		for i := range l.Events {
			if i%folds == f {
				continue
			}
			ev := &l.Events[i]
			t := ev.Candidates[ev.Logged].Tool
			tools[t].sum += ev.Reward
			tools[t].n++
			for len(positions) <= ev.Logged {
				positions = append(positions, stat{})
			}
			positions[ev.Logged].sum += ev.Reward
			positions[ev.Logged].n++
			all.sum += ev.Reward
			all.n++
		}
		global := 0.5
		if all.n > 0 {
			global = all.sum / all.n
		}
		for i := f; i < len(l.Events); i += folds {
			ev := &l.Events[i]
			q := make([]float64, len(ev.Candidates))
			for a, c := range ev.Candidates {
				m := global
				if a < len(positions) {
					m = (positions[a].sum + kappa*global) / (positions[a].n + kappa)
				}
				q[a] = (tools[c.Tool].sum + kappa*m) / (tools[c.Tool].n + kappa)
			}
			out[i] = q
		}
	}
	return out
}
