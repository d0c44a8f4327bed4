package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/rated-dev/rated/internal/cfgcheck"
)

// Spec is one policy as configured in YAML. Kind selects the policy; the other fields are its
// parameters (zero values take the defaults documented per kind).
type Spec struct {
	Name string `yaml:"name" json:"name"`
	// Kind: static, prior_only, blacklist, retry, rated (discounted LinUCB), linucb (γ = 1),
	// global_mab, sw_ucb, circuit_breaker, batch_grpo, factored (relevance model × reliability
	// layer × fusion), and the simulator's upper bounds oracle_availability, oracle_task,
	// oracle_expected, oracle_fallback, oracle_detect and oracle_detect_once (sim.NewPolicy builds those).
	Kind      string  `yaml:"kind" json:"kind"`
	Alpha     float64 `yaml:"alpha,omitempty" json:"alpha,omitempty"`
	Gamma     float64 `yaml:"gamma,omitempty" json:"gamma,omitempty"`
	Ridge     float64 `yaml:"ridge,omitempty" json:"ridge,omitempty"`
	PriorInit string  `yaml:"prior_init,omitempty" json:"prior_init,omitempty"`
	// ContextScale is β in x̃ = [β·x; 1] for rated/linucb; 0 takes √(λ(1−γ)) for rated and 1
	// for linucb (see DiscountedLinUCB).
	ContextScale float64 `yaml:"context_scale,omitempty" json:"context_scale,omitempty"`
	K            int     `yaml:"k,omitempty" json:"k,omitempty"`
	Window       int     `yaml:"window,omitempty" json:"window,omitempty"`
	// Attempts is the attempt budget per step: after a failed execution the policy is asked for
	// its next choice in the same step, up to Attempts executions (0 takes 1; retry: k).
	Attempts int `yaml:"attempts,omitempty" json:"attempts,omitempty"`
	// AttemptPrice λ (oracle_fallback): the price of one execution, in steps of SR. The oracle
	// plans each step's attempts to maximise expected success − λ·attempts; sweeping λ traces
	// the best SR per attempt spent that a policy knowing every tool's success probability
	// (not the coins) reaches.
	AttemptPrice float64 `yaml:"attempt_price,omitempty" json:"attempt_price,omitempty"`
	// KeepOrder (oracle_fallback): the planned attempts are the retriever's ranking of the
	// tools that can execute, as Retry's are; the oracle chooses only where to stop.
	KeepOrder bool `yaml:"keep_order,omitempty" json:"keep_order,omitempty"`
	// KnowsRelevance (oracle_fallback): the oracle plans with the qrels' relevance of each
	// candidate (0 or 1) instead of the calibrated estimate. Its plan is then the best any
	// coin-blind policy can make at λ, so its rows bound every such policy; with the calibrated
	// estimate they are the best plans of a policy that decides by that estimate, which a policy
	// deciding otherwise (Retry) can pass.
	KnowsRelevance bool `yaml:"knows_relevance,omitempty" json:"knows_relevance,omitempty"`
	// Order (static, blacklist, retry, oracle_availability, oracle_detect, oracle_detect_once):
	// the order the policy walks the candidates in, OrderRetriever ("" too) or OrderCalibrated:
	// the baseline given the calibrated relevance that factored policies fuse, as a reference
	// that shares their relevance estimate.
	Order string `yaml:"order,omitempty" json:"order,omitempty"`
	// Breaker settings (circuit_breaker).
	ConsecutiveFailures int     `yaml:"consecutive_failures,omitempty" json:"consecutive_failures,omitempty"`
	FailureRate         float64 `yaml:"failure_rate,omitempty" json:"failure_rate,omitempty"`
	MinCalls            int     `yaml:"min_calls,omitempty" json:"min_calls,omitempty"`
	CoolDown            int     `yaml:"cool_down,omitempty" json:"cool_down,omitempty"`
	HalfOpenCalls       int     `yaml:"half_open_calls,omitempty" json:"half_open_calls,omitempty"`
	// GRPO settings (batch_grpo).
	Batch        int     `yaml:"batch,omitempty" json:"batch,omitempty"`
	LearningRate float64 `yaml:"learning_rate,omitempty" json:"learning_rate,omitempty"`
	Temperature  float64 `yaml:"temperature,omitempty" json:"temperature,omitempty"`
	ClipLogit    float64 `yaml:"clip_logit,omitempty" json:"clip_logit,omitempty"`
	// Weights overrides the run's fusion weights for this policy.
	Weights *FusionWeights `yaml:"weights,omitempty" json:"weights,omitempty"`
	// Factored policies: the relevance model, the reliability layer (nil: none) and the fusion.
	Relevance   *RelevanceSpec `yaml:"relevance,omitempty" json:"relevance,omitempty"`
	Reliability *HealthConfig  `yaml:"reliability,omitempty" json:"reliability,omitempty"`
	// TaskReliability is the reliability layer's configuration once the runtime reports task
	// outcomes (the task and judged protocols): the layer keeps its evidence and continues
	// with these settings from the first task outcome on. A relevance model that learns which
	// tool serves a query makes hard masks and resets costly (they exclude the one tool known
	// to serve it), so the recommended policy relaxes them there. nil: reliability throughout.
	TaskReliability *HealthConfig `yaml:"task_reliability,omitempty" json:"task_reliability,omitempty"`
	Fusion          *FusionConfig `yaml:"fusion,omitempty" json:"fusion,omitempty"`
	// Explore makes the policy draw its choices (a logging policy for off-policy evaluation:
	// its propensities go to the decision log); nil: it decides as configured.
	Explore *ExploreConfig `yaml:"explore,omitempty" json:"explore,omitempty"`
}

// RelevanceSpec configures the relevance model of a factored policy.
type RelevanceSpec struct {
	// Model: "calibrated" (frozen, P(relevant | retrieval features) from the dev-split
	// calibration), "semantic" (frozen, S_sem), "residual" (ResidualLinUCB over the calibrated
	// estimate), "rated" (the paper's discounted LinUCB with its prior) or "kernel" (KernelRelevance).
	Model        string  `yaml:"model" json:"model"`
	Alpha        float64 `yaml:"alpha,omitempty" json:"alpha,omitempty"`
	Gamma        float64 `yaml:"gamma,omitempty" json:"gamma,omitempty"`
	Ridge        float64 `yaml:"ridge,omitempty" json:"ridge,omitempty"`
	ContextScale float64 `yaml:"context_scale,omitempty" json:"context_scale,omitempty"`
	// Kernel model: prior strength κ, bandwidth h, merge cosine, prototypes per tool.
	Strength      float64 `yaml:"strength,omitempty" json:"strength,omitempty"`
	Bandwidth     float64 `yaml:"bandwidth,omitempty" json:"bandwidth,omitempty"`
	Merge         float64 `yaml:"merge,omitempty" json:"merge,omitempty"`
	MaxPrototypes int     `yaml:"max_prototypes,omitempty" json:"max_prototypes,omitempty"`
	// Sketch "sign" evaluates the kernel on sign sketches (KernelConfig.Sketch); "" exactly.
	Sketch string `yaml:"sketch,omitempty" json:"sketch,omitempty"`
	// Bandwidths: candidate bandwidths the kernel chooses among by prequential log-loss
	// (KernelConfig.Bandwidths), instead of one bandwidth.
	Bandwidths []float64 `yaml:"bandwidths,omitempty" json:"bandwidths,omitempty"`
}

// KernelSketchSign is RelevanceSpec.Sketch's one value: the kernel on sign sketches.
const KernelSketchSign = "sign"

// RelevanceModels lists the values of RelevanceSpec.Model.
var RelevanceModels = []string{"calibrated", "semantic", "residual", "rated", "kernel"}

// OracleKinds are the policy kinds that see the simulator's schedule: upper bounds, labelled
// as such, built by the simulator rather than by New.
var OracleKinds = []string{"oracle_availability", "oracle_task", "oracle_expected", "oracle_fallback", "oracle_detect", "oracle_detect_once"}

// IsOracle reports whether kind is one of OracleKinds.
func IsOracle(kind string) bool {
	for _, k := range OracleKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// AttemptBudget is the number of executions the policy may make per step.
func (s Spec) AttemptBudget() int {
	switch {
	case s.Attempts > 0:
		return s.Attempts
	case s.Kind == "retry" && s.K > 0:
		return s.K
	case s.Kind == "retry":
		return 3
	}
	return 1
}

// NeedsCalibration reports whether the policy reads Candidate.Relevance.
func (s Spec) NeedsCalibration() bool {
	if s.Kind == "oracle_expected" || s.Kind == "oracle_fallback" || s.Order == OrderCalibrated {
		return true
	}
	if s.Kind != "factored" || s.Relevance == nil {
		return false
	}
	m := s.Relevance.Model
	return m == "calibrated" || m == "residual" || m == "kernel"
}

// orderedKinds are the kinds that walk the candidates in an order (Spec.Order).
var orderedKinds = map[string]bool{"static": true, "blacklist": true, "retry": true,
	"oracle_availability": true, "oracle_detect": true, "oracle_detect_once": true}

// Kinds lists the known policy kinds.
var Kinds = append([]string{"static", "prior_only", "blacklist", "retry", "rated", "linucb", "global_mab", "sw_ucb",
	"circuit_breaker", "batch_grpo", "factored"}, OracleKinds...)

// Validate checks the spec; key is its location in the config (e.g. "policies[3]") and is named
// in the error.
func (s Spec) Validate(key string) error {
	known := false
	for _, k := range Kinds {
		known = known || k == s.Kind
	}
	if !known {
		return fmt.Errorf("%s.kind: unknown policy %q (known: %s)", key, s.Kind, strings.Join(Kinds, ", "))
	}
	if strings.TrimSpace(s.Name) == "" {
		return fmt.Errorf("%s.name: a policy needs a name", key)
	}
	if err := cfgcheck.Finite(key, s); err != nil {
		return err
	}
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("%s.%s = %v: must be %s", key, field, v, want)
	}
	switch s.Kind {
	case "rated", "linucb":
		if s.Kind == "rated" && (!(s.Gamma > 0) || s.Gamma > 1) {
			return bad("gamma", s.Gamma, "in (0, 1]")
		}
		if s.Alpha < 0 || math.IsNaN(s.Alpha) || math.IsInf(s.Alpha, 0) {
			return bad("alpha", s.Alpha, ">= 0")
		}
		if s.Ridge < 0 || math.IsNaN(s.Ridge) {
			return bad("ridge", s.Ridge, "> 0 (0 takes the default 1)")
		}
		if p := s.PriorInit; p != "" && p != "intercept" && p != "uniform" {
			return bad("prior_init", p, `"intercept" or "uniform"`)
		}
		// β scales the context; a negative one flips the sign of the uniform prior's mean, and
		// one past 1e6 squares to nothing meaningful (near 1e154 it overflows to NaN scores).
		if s.ContextScale < 0 || s.ContextScale > 1e6 {
			return bad("context_scale", s.ContextScale, "in (0, 1e6] (0 takes the default)")
		}
		if s.Kind == "linucb" && s.Gamma != 0 {
			return fmt.Errorf("%s.gamma = %v: applies to kind rated only (linucb does not discount: γ = 1)", key, s.Gamma)
		}
	case "global_mab", "sw_ucb":
		if s.Alpha < 0 {
			return bad("alpha", s.Alpha, ">= 0 (a negative bonus penalises the tools least tried)")
		}
		if s.Window < 0 {
			return bad("window", s.Window, "> 0")
		}
	case "retry":
		if s.K < 0 {
			return bad("k", s.K, ">= 1 (0 takes the default 3)")
		}
	case "circuit_breaker":
		if s.FailureRate < 0 || s.FailureRate > 1 {
			return bad("failure_rate", s.FailureRate, "in [0, 1]")
		}
		if s.ConsecutiveFailures < 0 || s.CoolDown < 0 || s.Window < 0 || s.MinCalls < 0 || s.HalfOpenCalls < 0 {
			return fmt.Errorf("%s: breaker counts must be >= 0", key)
		}
		// The rate rule needs a window to fill, and at least min_calls of it: otherwise it never
		// trips, and a failure_rate turns the consecutive-failure default off, so the breaker
		// would never open.
		if s.FailureRate > 0 && s.Window == 0 {
			return fmt.Errorf("%s.failure_rate = %v needs a window of calls (window >= 1)", key, s.FailureRate)
		}
		if s.FailureRate > 0 && s.MinCalls > s.Window {
			return fmt.Errorf("%s.min_calls = %d: more than the window's %d calls, so the failure rate is never judged", key, s.MinCalls, s.Window)
		}
	case "batch_grpo":
		if s.Batch < 0 || s.LearningRate < 0 || s.Temperature < 0 {
			return fmt.Errorf("%s: batch, learning_rate and temperature must be >= 0", key)
		}
	}
	if s.Attempts < 0 {
		return bad("attempts", s.Attempts, ">= 1 (0 takes the default)")
	}
	if s.AttemptPrice < 0 || s.AttemptPrice > 1 {
		return bad("attempt_price", s.AttemptPrice, "in [0, 1]")
	}
	if (s.AttemptPrice != 0 || s.KeepOrder || s.KnowsRelevance) && s.Kind != "oracle_fallback" {
		return fmt.Errorf("%s: attempt_price, keep_order and knows_relevance apply to kind oracle_fallback only", key)
	}
	switch {
	case s.Order != "" && s.Order != OrderRetriever && s.Order != OrderCalibrated:
		return bad("order", fmt.Sprintf("%q", s.Order), fmt.Sprintf("%q or %q", OrderRetriever, OrderCalibrated))
	case s.Order != "" && !orderedKinds[s.Kind]:
		return fmt.Errorf("%s.order: applies to kinds static, blacklist, retry, oracle_availability, oracle_detect and oracle_detect_once only", key)
	}
	if s.Kind == "factored" {
		if err := s.validateFactored(key); err != nil {
			return err
		}
	} else if s.Relevance != nil || s.Reliability != nil || s.TaskReliability != nil || s.Fusion != nil {
		return fmt.Errorf("%s: relevance, reliability, task_reliability and fusion apply to kind factored only", key)
	}
	if s.Explore != nil {
		if err := s.Explore.Validate(key+".explore", s.Kind); err != nil {
			return err
		}
	}
	if s.Weights != nil {
		return s.Weights.Validate(key + ".weights")
	}
	return nil
}

func (s Spec) validateFactored(key string) error {
	if s.Relevance == nil {
		return fmt.Errorf("%s.relevance: a factored policy needs a relevance model (model: %s)", key, strings.Join(RelevanceModels, ", "))
	}
	r := s.Relevance
	known := false
	for _, m := range RelevanceModels {
		known = known || m == r.Model
	}
	if !known {
		return fmt.Errorf("%s.relevance.model = %q: must be one of %s", key, r.Model, strings.Join(RelevanceModels, ", "))
	}
	for name, v := range map[string]float64{"alpha": r.Alpha, "ridge": r.Ridge, "context_scale": r.ContextScale,
		"strength": r.Strength, "bandwidth": r.Bandwidth} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s.relevance.%s = %v: must be a finite number >= 0", key, name, v)
		}
	}
	if r.Gamma < 0 || r.Gamma > 1 || math.IsNaN(r.Gamma) {
		return fmt.Errorf("%s.relevance.gamma = %v: must be in (0, 1] (0 takes 1)", key, r.Gamma)
	}
	if r.Merge < 0 || r.Merge > 1 || math.IsNaN(r.Merge) {
		return fmt.Errorf("%s.relevance.merge = %v: must be a cosine in (0, 1] (0 takes 0.98)", key, r.Merge)
	}
	if r.MaxPrototypes < 0 {
		return fmt.Errorf("%s.relevance.max_prototypes = %d: must be >= 0 (0 takes 64)", key, r.MaxPrototypes)
	}
	if r.Sketch != "" && r.Sketch != KernelSketchSign {
		return fmt.Errorf("%s.relevance.sketch = %q: must be %q or empty (exact kernel)", key, r.Sketch, KernelSketchSign)
	}
	if r.Sketch != "" && r.Model != "kernel" {
		return fmt.Errorf("%s.relevance.sketch: only the kernel model has a sketch (model is %q)", key, r.Model)
	}
	if len(r.Bandwidths) > 0 {
		switch {
		case r.Model != "kernel":
			return fmt.Errorf("%s.relevance.bandwidths: only the kernel model has a bandwidth (model is %q)", key, r.Model)
		case r.Bandwidth != 0:
			return fmt.Errorf("%s.relevance: set bandwidth or bandwidths (candidates to choose among), not both", key)
		}
		for i, b := range r.Bandwidths {
			if !(b > 0) || math.IsInf(b, 0) {
				return fmt.Errorf("%s.relevance.bandwidths[%d] = %v: must be a finite number > 0", key, i, b)
			}
		}
	}
	if s.Reliability != nil {
		if err := s.Reliability.Validate(key + ".reliability"); err != nil {
			return err
		}
	}
	if s.TaskReliability != nil {
		if s.Reliability == nil {
			return fmt.Errorf("%s.task_reliability: needs a reliability layer to reconfigure (set reliability too)", key)
		}
		if err := s.TaskReliability.Validate(key + ".task_reliability"); err != nil {
			return err
		}
	}
	if s.Fusion == nil {
		return fmt.Errorf("%s.fusion: a factored policy needs a fusion (kind: %s or %s)", key, FusionLinear, FusionExpected)
	}
	return s.Fusion.Validate(key + ".fusion")
}

// Env describes what a policy is built for.
type Env struct {
	// NumTools is the catalog size at the start (per-tool state grows when tools are added).
	NumTools int
	Dim      int
	Weights  FusionWeights
	Seed     uint64
	// Providers[tool] is the tool's provider index (tools sharing an endpoint host or an n8n
	// node), -1 for none; nil: no providers.
	Providers []int
}

// New builds the policy described by spec. Zero-valued parameters take these defaults: α 0.1,
// ridge 1, context scale √(λ(1−γ)) (rated) or 1 (linucb), k 3, SW window 500, breaker = gobreaker defaults (trip after more than
// 5 consecutive failures, cool-down 60, 1 half-open call), GRPO batch 200, learning rate 20,
// temperature 0.05, clip 10.
func New(spec Spec, env Env) (Policy, error) {
	if err := spec.Validate("policy " + spec.Name); err != nil {
		return nil, err
	}
	if IsOracle(spec.Kind) {
		return nil, fmt.Errorf("policy %s: kind %s sees the failure schedule and is built by the simulator", spec.Name, spec.Kind)
	}
	if spec.Explore != nil {
		inner := spec
		inner.Explore = nil
		p, err := New(inner, env)
		if err != nil {
			return nil, err
		}
		return NewExploring(p, *spec.Explore, env.Seed), nil
	}
	w := env.Weights
	if spec.Weights != nil {
		w = *spec.Weights
	}
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	ori := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	switch spec.Kind {
	case "static":
		return NewStaticOrdered(spec.Name, spec.Order), nil
	case "prior_only":
		return NewPriorOnly(spec.Name, w), nil
	case "blacklist":
		return NewBlacklistOrdered(spec.Name, spec.Order), nil
	case "retry":
		return NewStaticOrdered(spec.Name, spec.Order), nil // the attempt budget (k) makes it retry
	case "rated", "linucb":
		gamma := spec.Gamma
		if spec.Kind == "linucb" {
			gamma = 1
		}
		ridge := or(spec.Ridge, 1)
		cfg := LinUCBConfig{Alpha: or(spec.Alpha, 0.1), Gamma: gamma, Ridge: ridge, Weights: w, PriorInit: spec.PriorInit,
			ContextScale: or(spec.ContextScale, math.Sqrt(ridge*(1-gamma)))}
		if gamma == 1 {
			cfg.ContextScale = or(spec.ContextScale, 1)
		}
		return NewDiscountedLinUCB(spec.Name, cfg, env.NumTools, env.Dim), nil
	case "global_mab":
		return NewGlobalUCB(spec.Name, or(spec.Alpha, 0.1), w, env.NumTools), nil
	case "sw_ucb":
		return NewSlidingWindowUCB(spec.Name, or(spec.Alpha, 0.1), ori(spec.Window, 500), w, env.NumTools), nil
	case "circuit_breaker":
		cfg := BreakerConfig{
			ConsecutiveFailures: spec.ConsecutiveFailures, FailureRate: spec.FailureRate,
			Window: spec.Window, MinCalls: spec.MinCalls,
			CoolDown: ori(spec.CoolDown, 60), HalfOpenCalls: ori(spec.HalfOpenCalls, 1),
		}
		if cfg.ConsecutiveFailures == 0 && cfg.FailureRate == 0 {
			cfg.ConsecutiveFailures = 5
		}
		return NewCircuitBreaker(spec.Name, cfg, env.NumTools), nil
	case "factored":
		return newFactored(spec, env)
	case "batch_grpo":
		cfg := GRPOConfig{Batch: ori(spec.Batch, 200), LearningRate: or(spec.LearningRate, 20), Temperature: or(spec.Temperature, 0.05), ClipLogit: or(spec.ClipLogit, 10)}
		src := rand.NewPCG(env.Seed, 0x9e3779b97f4a7c15)
		p := NewBatchGRPO(spec.Name, cfg, env.NumTools, rand.New(src))
		p.src = src
		return p, nil
	}
	return nil, fmt.Errorf("policy %s: unknown kind %q", spec.Name, spec.Kind)
}

// newFactored builds a factored policy. Relevance defaults: α 0.1, γ 1 (relevance does not
// drift; availability is the reliability layer's job), ridge 1, context scale 1 (rated: the
// paper's defaults, γ 0.95 and β = √(λ(1−γ))).
func newFactored(spec Spec, env Env) (Policy, error) {
	r := spec.Relevance
	or := func(v, def float64) float64 {
		if v == 0 {
			return def
		}
		return v
	}
	cfg := LinUCBConfig{Alpha: or(r.Alpha, 0.1), Gamma: or(r.Gamma, 1), Ridge: or(r.Ridge, 1), ContextScale: or(r.ContextScale, 1)}
	var rel RelevanceModel
	switch r.Model {
	case "calibrated":
		rel = FrozenRelevance{}
	case "semantic":
		rel = FrozenRelevance{Semantic: true}
	case "residual":
		rel = NewResidualLinUCB(cfg, env.NumTools, env.Dim)
	case "kernel":
		rel = NewKernelRelevance(KernelConfig{Strength: or(r.Strength, 1), Bandwidth: or(r.Bandwidth, 0.05),
			Merge: or(r.Merge, 0.98), MaxPrototypes: r.MaxPrototypes, Alpha: r.Alpha, Sketch: r.Sketch,
			Bandwidths: r.Bandwidths, Dim: env.Dim})
	case "rated":
		cfg.Gamma = or(r.Gamma, 0.95)
		cfg.ContextScale = or(r.ContextScale, math.Sqrt(cfg.Ridge*(1-cfg.Gamma)))
		if cfg.ContextScale == 0 {
			cfg.ContextScale = 1
		}
		rel = NewPaperRelevance(cfg, env.NumTools, env.Dim)
	default:
		return nil, fmt.Errorf("policy %s: unknown relevance model %q", spec.Name, r.Model)
	}
	if spec.Reliability == nil {
		return NewFactored(spec.Name, rel, nil, *spec.Fusion), nil
	}
	p := NewFactored(spec.Name, rel, NewHealthLayer(*spec.Reliability, env.Providers), *spec.Fusion)
	if spec.TaskReliability != nil {
		p.SetTaskReliability(*spec.TaskReliability)
	}
	return p, nil
}
