package bandit

import (
	"fmt"
	"math"
)

// Reliability is the reliability layer: it estimates, from execution outcomes only, how likely
// a tool is to execute at step t, and whether a health check masks it. It never learns
// relevance, so it can sit beside any relevance model.
type Reliability interface {
	// Estimate returns r̂ ∈ [0, 1], the estimated probability that tool executes at step t, and
	// whether the tool (or its provider) is masked at t.
	Estimate(tool, t int) (rhat float64, masked bool)
	// Update records one execution of tool at step t.
	Update(tool, t int, executed bool)
}

// HealthConfig configures HealthLayer. Zero values mean "off" except where noted; the defaults
// of the recommended policy are in configs/paper.yaml.
type HealthConfig struct {
	// HalfLife H (steps of wall-clock time): evidence loses half its weight every H steps,
	// whether the tool is called or not. 0 keeps evidence forever.
	HalfLife float64 `yaml:"half_life,omitempty" json:"half_life,omitempty"`
	// PriorStrength m: the number of pseudo-observations at the pooled rate behind every tool,
	// r̂ = (s + m·p)/(s + f + m). Must be > 0.
	PriorStrength float64 `yaml:"prior_strength,omitempty" json:"prior_strength,omitempty"`
	// PoolRate η of the pooled success rate p̄, an EWMA over the executions of tools with little
	// evidence (fewer than PoolEvidence decayed observations): the expected rate of a tool the
	// layer knows nothing about. 0 freezes p̄ at PoolInit.
	PoolRate float64 `yaml:"pool_rate,omitempty" json:"pool_rate,omitempty"`
	// PoolInit p̄₀ in [0, 1].
	PoolInit float64 `yaml:"pool_init,omitempty" json:"pool_init,omitempty"`
	// PoolEvidence: the evidence below which a tool's executions feed p̄.
	PoolEvidence float64 `yaml:"pool_evidence,omitempty" json:"pool_evidence,omitempty"`
	// ResetOnFailure: a failure wipes the tool's past successes (a tool that just failed is not
	// vouched for by calls that succeeded before it broke).
	ResetOnFailure bool `yaml:"reset_on_failure,omitempty" json:"reset_on_failure,omitempty"`
	// MaskBase D: after its c-th consecutive failure a tool is masked for D·2^(c−1) steps
	// (exponential backoff; the next call after the mask is the re-probe). 0: no masks.
	MaskBase int `yaml:"mask_base,omitempty" json:"mask_base,omitempty"`
	// MaskMax caps one mask's length (0: no cap), which bounds how long a recovered tool stays
	// unused.
	MaskMax int `yaml:"mask_max,omitempty" json:"mask_max,omitempty"`
	// RecoveryPrior turns on the recovery model with this prior mean outage length (steps): a
	// tool whose last call failed is up again at step t with probability 1 − exp(−μ̂·(t − t_f)),
	// where μ̂, the fleet's recovery rate, is learned from the outages the layer has seen end
	// (recoveries over observed down-time, with RecoveryStrength prior outages of the prior
	// length). A fleet whose tools come back is re-probed sooner; one whose failures are for
	// good is soon left alone. 0: off (a failed tool keeps its count-based estimate).
	RecoveryPrior float64 `yaml:"recovery_prior,omitempty" json:"recovery_prior,omitempty"`
	// RecoveryStrength: the prior's weight, in outages (0 takes 1).
	RecoveryStrength float64 `yaml:"recovery_strength,omitempty" json:"recovery_strength,omitempty"`
	// Probe: when a tool's mask ends, it is estimated at its provider's rate (as an untried
	// tool) until its next execution, so the backoff schedule is the re-probe schedule; without
	// it a tool that failed keeps its low r̂ after the mask and is rarely tried again.
	Probe bool `yaml:"probe,omitempty" json:"probe,omitempty"`
	// ProviderStrength m_p: pseudo-observations at p̄ behind each provider's pooled rate, which
	// in turn is the prior of its tools (tool ← provider ← all); failures count against the
	// provider only when a second distinct tool of it fails with no success in between.
	// 0: no provider level.
	ProviderStrength float64 `yaml:"provider_strength,omitempty" json:"provider_strength,omitempty"`
	// ProviderMaskAfter: a provider is masked (with the same backoff) once this many distinct
	// tools of it failed with no success of the provider in between; at least 2, since only
	// correlated failures count against a provider (one tool failing alone says nothing about its
	// siblings). 0: never.
	ProviderMaskAfter int `yaml:"provider_mask_after,omitempty" json:"provider_mask_after,omitempty"`
	// SiblingStrength turns on the learned sibling correlation with this many prior pairs at
	// ρ = 0 (failures independent until seen otherwise): ρ̂ is how often a tool failed when it
	// was called while a sibling (a tool of its provider) had failed with no success of the
	// provider since. Once ρ̂ > 1/2, such a tool's r̂ is multiplied by 1 − ρ̂·(the provider is
	// still down), the last factor from the recovery model (1 without it). A fleet whose
	// providers fail as a whole learns ρ̂ near 1 and steers away from the siblings of a failed
	// tool before they fail; one whose tools break alone learns the base failure rate and
	// leaves them be. 0: off.
	SiblingStrength float64 `yaml:"sibling_strength,omitempty" json:"sibling_strength,omitempty"`
	// ProviderLearned: the provider level (its pooled rate and its masks) acts only while the
	// learned sibling correlation ρ̂ (sibling_strength, which it needs) exceeds 1/2. Where tools
	// break one by one, two siblings failing in a row is chance, and masking or discounting
	// their healthy siblings costs steps; where providers fail as a whole, ρ̂ passes 1/2 after
	// the first few sibling calls and the provider level acts as without the gate.
	ProviderLearned bool `yaml:"provider_learned,omitempty" json:"provider_learned,omitempty"`
	// CohortWindow W (steps) turns on incident cohorts: outages that began within about W steps
	// of each other (the same W-step window of outage starts or a neighbouring one) are taken as
	// one incident, such as a shared dependency that took unrelated tools down at once. Once a
	// tool of the cohort is seen to recover, a member still down since before that recovery is
	// up again with probability ρ̂_c, learned from the calls made to such members (how many
	// executed, with cohort_strength prior calls at 1/2). While ρ̂_c > 1/2 the recovery lifts
	// the member's own mask and raises its recovery probability to ρ̂_c; a fleet whose outages
	// end one by one learns ρ̂_c at its base rate and is left as without cohorts. Windows are
	// counted from step 0, so keep W when a layer is reconfigured. 0: off.
	CohortWindow int `yaml:"cohort_window,omitempty" json:"cohort_window,omitempty"`
	// CohortStrength: the prior of ρ̂_c, in calls at 1/2 (0 takes 1).
	CohortStrength float64 `yaml:"cohort_strength,omitempty" json:"cohort_strength,omitempty"`
	// IncidentProbe D (steps) turns on fleet incidents: the tools down at once are taken as one
	// incident, probed D steps after it opened and then with backoff (2D, 4D, …, capped by
	// mask_max): at a probe step every down tool is estimated as before its outage, so the most
	// promising of them is called. When any down tool is seen to execute, the incident resolves:
	// every tool down since before is up again with probability ρ̂_i (how often such tools
	// executed when called, one prior call at 1/2 or incident_prior, decayed with the
	// half-life), and a tool back from the incident no longer carries its outage's failures.
	// Two failures in a row of tools that came back (within a half-life) mark a relapse, which
	// takes them all down again until the next resolution. While ρ̂_i < 1/2 (outages that end
	// one by one) nothing is lifted, probed or forgiven. The incident's own calls stay out of
	// the recovery rate μ̂. 0: off.
	IncidentProbe int `yaml:"incident_probe,omitempty" json:"incident_probe,omitempty"`
	// IncidentEarlyProbe: a tool held down by its fleet's relapse may be called before the
	// incident's first probe is due. The outage began between the fleet's last execution before
	// the incident opened and the failure that opened it; if it lasts D steps, the fleet is back
	// by t with probability q(t), rising linearly from 0 (D after that execution) to 1 (D after
	// the opening failure), and the held tool is estimated at q(t) times its estimate before the
	// outage, unmasked: called early only where that beats the other candidates, a failed call
	// costing little. Needs incident_probe.
	IncidentEarlyProbe bool `yaml:"incident_early_probe,omitempty" json:"incident_early_probe,omitempty"`
	// RelapseAfterOne: once the fleet has relapsed within a half-life, one failure of a tool it
	// brought back marks the next relapse, not two (a fleet seen to flap is believed at its
	// first failure). Needs incident_probe.
	RelapseAfterOne bool `yaml:"relapse_after_one,omitempty" json:"relapse_after_one,omitempty"`
	// ProviderSuccessUnmasks: a provider's mask ends when one of its tools executes (a call the
	// mask did not stop: an incident's probe or lifted call, or a step whose every candidate was
	// masked). The mask said the provider was down as a whole; a tool of it that runs says it
	// is not, and its healthy siblings are no longer held.
	ProviderSuccessUnmasks bool `yaml:"provider_success_unmasks,omitempty" json:"provider_success_unmasks,omitempty"`
	// IncidentGateErrors z: the fleet incidents act while ρ̂_i plus z standard errors of it,
	// z·√(ρ̂_i(1 − ρ̂_i)/n), n the decayed calls behind it with the prior one, reaches 1/2, not
	// while ρ̂_i itself does. Closing the gate wrongly holds a whole fleet that is back until a
	// tool's own re-probe (hundreds of steps); keeping it open wrongly costs a few lifted calls
	// that fail and mark a relapse. One lifted call that fails at the fleet's next outage,
	// after a single one that ran, leaves ρ̂_i just under 1/2 (the failure is the more recent),
	// and with z = 0 that alone closes the gate. Needs incident_probe when > 0.
	IncidentGateErrors float64 `yaml:"incident_gate_errors,omitempty" json:"incident_gate_errors,omitempty"`
	// IncidentEvidenceWindow: a call is evidence on ρ̂_i only within D steps (incident_probe)
	// of the resolution it would judge, or later while no failure has reopened the incident
	// since. A tool lifted by a resolution and first called after the fleet has gone down
	// again fails with the new outage, which says nothing about whether the resolution was
	// its; counted, one such call closes the gate of a fleet that has only begun to flap, and
	// nothing lifted is called again to reopen it (on default dev, seed 20 held its flapping
	// fleet back from step 2,484 to 8,132). Within D steps every call counts, whatever came
	// before it, so that the first failure does not end the evidence (outages that end one by
	// one, as a flaky tool's, would be judged on fewer calls); after them the evidence lasts
	// while nothing has failed, so a fleet back for good whose tools are first called late is
	// still judged by those calls. Needs incident_probe.
	IncidentEvidenceWindow bool `yaml:"incident_evidence_window,omitempty" json:"incident_evidence_window,omitempty"`
	// IncidentPrior: the mean of ρ̂_i's one prior call, in (0, 1]; 0 takes 1/2. At 1/2 a fleet's
	// first resolutions lift its tools at about half their estimate, so a tool of equal
	// relevance that never went down is preferred until lifted calls have run; and the first
	// lifted call, if it fails, puts ρ̂_i at 1/4, which closes the gate even with z standard
	// errors and holds the fleet until one of its tools comes back on its own re-probe
	// (hundreds of steps). At 1 a resolution is believed until lifted calls fail: one failure
	// leaves ρ̂_i at 1/2, and outages that end one by one (a flaky tool's, ρ̂_i near its
	// success rate) still close the gate after a few calls. Needs incident_probe when set.
	IncidentPrior float64 `yaml:"incident_prior,omitempty" json:"incident_prior,omitempty"`
	// IncidentHalfProbe: when an incident's first probe fails, probe again D/2 steps later,
	// then go on with the backoff (2D after the first probe, 4D, …). A schedule of whole
	// multiples of D meets a fleet that flaps with a period dividing 2D always in the same
	// phase: with half-periods of 50 or 150 steps and D = 100 every probe lands in a down-phase
	// and the fleet is held for good; the half-step probe lands in the other phase. It costs one
	// failed call per incident that outlasts D·3/2 steps. Needs incident_probe.
	IncidentHalfProbe bool `yaml:"incident_half_probe,omitempty" json:"incident_half_probe,omitempty"`
	// IncidentPhase N (steps) learns the fleet's pace: a version space of strictly periodic
	// outages (half-periods 1 to N steps, every phase) kept consistent with every failure and
	// every execution of the fleet's tools. Once the fleet has flapped twice and every
	// hypothesis left agrees, its tools are masked in the predicted down-phases (once the
	// fleet has been seen down in the phase or within the last D = incident_probe steps; before
	// that they are offered as a probe, so that flapping that stops is noticed) and brought back
	// in the predicted up-phases, at any pace; outages that are not periodic leave no
	// hypothesis standing and change nothing. Needs incident_probe.
	IncidentPhase int `yaml:"incident_phase,omitempty" json:"incident_phase,omitempty"`
}

// maxIncidentPhase bounds incident_phase: the space holds one arc per half-period.
const maxIncidentPhase = 100000

// Validate checks the configuration; key locates it in error messages.
func (c HealthConfig) Validate(key string) error {
	for name, v := range map[string]float64{"half_life": c.HalfLife, "pool_rate": c.PoolRate,
		"pool_evidence": c.PoolEvidence, "provider_strength": c.ProviderStrength,
		"recovery_prior": c.RecoveryPrior, "recovery_strength": c.RecoveryStrength,
		"sibling_strength": c.SiblingStrength, "cohort_strength": c.CohortStrength,
		"incident_gate_errors": c.IncidentGateErrors} {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s.%s = %v: must be a finite number >= 0", key, name, v)
		}
	}
	switch {
	case !(c.PriorStrength > 0) || math.IsInf(c.PriorStrength, 0):
		return fmt.Errorf("%s.prior_strength = %v: must be a finite number > 0", key, c.PriorStrength)
	case c.PoolRate > 1:
		return fmt.Errorf("%s.pool_rate = %v: must be in [0, 1]", key, c.PoolRate)
	case !(c.PoolInit >= 0 && c.PoolInit <= 1):
		return fmt.Errorf("%s.pool_init = %v: must be in [0, 1]", key, c.PoolInit)
	case c.MaskBase < 0 || c.MaskMax < 0 || c.ProviderMaskAfter < 0 || c.CohortWindow < 0 || c.IncidentProbe < 0:
		return fmt.Errorf("%s: mask_base, mask_max, provider_mask_after, cohort_window and incident_probe must be >= 0", key)
	case c.IncidentPhase < 0 || c.IncidentPhase > maxIncidentPhase:
		return fmt.Errorf("%s.incident_phase = %d: must be in [0, %d]", key, c.IncidentPhase, maxIncidentPhase)
	case c.ProviderMaskAfter == 1:
		return fmt.Errorf("%s.provider_mask_after = 1: must be 0 (off) or at least 2 (only failures of two distinct tools count against a provider)", key)
	case c.ProviderLearned && c.SiblingStrength == 0:
		return fmt.Errorf("%s.provider_learned needs sibling_strength > 0 (the correlation it waits for)", key)
	case !(c.IncidentPrior >= 0 && c.IncidentPrior <= 1):
		return fmt.Errorf("%s.incident_prior = %v: must be in (0, 1] (0 takes 1/2)", key, c.IncidentPrior)
	case (c.IncidentEarlyProbe || c.RelapseAfterOne || c.IncidentGateErrors > 0 || c.IncidentEvidenceWindow || c.IncidentPrior > 0 || c.IncidentHalfProbe || c.IncidentPhase > 0) && c.IncidentProbe == 0:
		return fmt.Errorf("%s: incident_early_probe, relapse_after_one, incident_gate_errors, incident_evidence_window, incident_prior, incident_half_probe and incident_phase need incident_probe > 0 (the fleet incidents they refine)", key)
	}
	return nil
}

// HealthLayer is the reliability layer of the recommended policy: per-tool success and failure
// counts decayed by wall-clock half-life, a pooled prior for tools with no evidence, optional
// pooling through each tool's provider (tools sharing an endpoint host or an n8n node), and
// exponential-backoff health-check masks:
//
//	p̄ (all tools)  →  r_p = (s_p + m_p·p̄)/(s_p + f_p + m_p)  →  r̂ = (s + m·r_p)/(s + f + m)
//
// Before any failure every estimate is p̄₀ = 1 or climbs to 1, so a fusion that multiplies or
// adds r̂ ranks exactly as the relevance model does: the layer costs nothing while tools work.
type HealthLayer struct {
	cfg      HealthConfig
	provider []int // provider index per tool; -1 (or out of range) = none
	tools    []toolHealth
	provs    []providerHealth
	pool     float64
	// Recovery model: outages seen to end, and the down-time observed (from an outage's first
	// failure to each later call of the tool).
	recoveries, downTime float64
	// Sibling correlation: calls of a tool while a sibling was down, and how many failed.
	siblingCalls, siblingFails float64
	// Incident cohorts: per window of outage starts (start / W), the last step at which an
	// outage that began in it was seen to end; calls of members down since before such a
	// recovery, and how many executed.
	cohortRecovered        map[int]int
	cohortCalls, cohortUps float64
	inc                    incidentState
	phase                  fleetPhase // incident_phase
	// decayByGap[g] = 2^(−g/H) for gaps below decayTableLen, so an estimate costs no math.Exp2.
	decayByGap []float64
}

type toolHealth struct {
	s, f        float64 // decayed successes and failures
	last        int     // step of the last decay
	consecutive int     // consecutive failures
	maskedUntil int
	lastFail    int     // step of the last failure (while consecutive > 0)
	observed    int     // last step of the current outage already counted as down-time
	fBefore     float64 // decayed failures before the current outage, at its first failure
	outageStart int
	// Fleet incidents: the last success, the last recovery (an execution after a failure), and
	// whether the tool has recovered from an outage at all (a member of the fleet's incidents).
	lastOK, recovered int
	incMember         bool
}

// incidentState is the fleet's incident (incident_probe): when it opened, its probe schedule,
// its last resolution and relapse, and the evidence ρ̂_i that resolutions are their members'.
type incidentState struct {
	open               bool
	nextProbe, probes  int
	resolved, relapsed int // steps; -1: none
	relapsedOf         int // the resolution the last relapse undid
	relapseFails       int // failures in a row of the tools the last resolution brought back
	calls, ups         float64
	last               int // step of the last decay of calls and ups
	// The fleet's last execution (a lifted tool or a member; −1: none), and that step when the
	// current incident opened (incident_early_probe: its outage began after it).
	memberOK, openedAfter int
}

type providerHealth struct {
	s, f        float64
	last        int
	failedTools map[int]bool // distinct tools failed since the provider's last success
	consecutive int          // provider masks in a row
	maskedUntil int
	suspect     bool // a tool of the provider failed, and none succeeded since
	lastFail    int  // step of the provider's last failure (while suspect)
}

// NewHealthLayer returns the layer. providers[tool] is the tool's provider index (-1 = none);
// tools beyond the slice have no provider. It panics on an invalid cfg: callers validate first.
func NewHealthLayer(cfg HealthConfig, providers []int) *HealthLayer {
	l := &HealthLayer{provider: providers, pool: cfg.PoolInit}
	l.inc.resolved, l.inc.relapsed, l.inc.relapsedOf = -1, -1, -1
	l.inc.openedAfter, l.inc.memberOK = -1, -1
	l.Reconfigure(cfg)
	return l
}

// Reconfigure makes the layer continue with cfg, keeping its evidence. Masks that cfg could
// never set (mask_base 0) are lifted. It panics on an invalid cfg: callers validate first.
func (l *HealthLayer) Reconfigure(cfg HealthConfig) {
	if err := cfg.Validate("reliability"); err != nil {
		panic(err)
	}
	l.cfg, l.decayByGap = cfg, nil
	if cfg.HalfLife > 0 {
		l.decayByGap = make([]float64, decayTableLen)
		for g := range l.decayByGap {
			l.decayByGap[g] = math.Exp2(-float64(g) / cfg.HalfLife)
		}
	}
	if cfg.MaskBase == 0 {
		for i := range l.tools {
			l.tools[i].maskedUntil = 0
		}
		for i := range l.provs {
			l.provs[i].maskedUntil = 0
		}
	}
}

// decay returns the factor evidence from step last keeps at step t.
func (l *HealthLayer) decay(last, t int) float64 {
	if l.cfg.HalfLife <= 0 || t <= last {
		return 1
	}
	if t-last < len(l.decayByGap) {
		return l.decayByGap[t-last]
	}
	return math.Exp2(-float64(t-last) / l.cfg.HalfLife)
}

// decayTableLen: decay factors are tabulated for gaps below it (the same values math.Exp2
// gives), since every estimate of every candidate decays its tool's evidence.
const decayTableLen = 4096

func (l *HealthLayer) providerOf(tool int) int {
	if tool < len(l.provider) {
		return l.provider[tool]
	}
	return -1
}

// providerRate is r_p at step t (p̄ when the tool has no provider or the level is off).
func (l *HealthLayer) providerRate(p, t int) float64 {
	mp := l.cfg.ProviderStrength
	if p < 0 || mp == 0 || p >= len(l.provs) || !l.providerActs() {
		return l.pool
	}
	ph := &l.provs[p]
	k := l.decay(ph.last, t)
	s, f := ph.s*k, ph.f*k
	// A provider's health only warns: siblings of a healthy provider still fail on their own
	// (a tool can break alone), so provider successes never lift a tool above p̄.
	return math.Min(l.pool, (s+mp*l.pool)/(s+f+mp))
}

// Estimate implements Reliability.
func (l *HealthLayer) Estimate(tool, t int) (float64, bool) {
	p := l.providerOf(tool)
	prior := l.providerRate(p, t)
	m := l.cfg.PriorStrength
	if tool >= len(l.tools) {
		return prior * l.siblingUp(p, t), l.providerMasked(p, t)
	}
	th := &l.tools[tool]
	if l.cfg.IncidentProbe > 0 {
		if r, masked, ok := l.incidentEstimate(th, prior, t); ok {
			return r, masked
		}
	}
	masked := t < th.maskedUntil || l.providerMasked(p, t)
	cohortUp := 0.0
	if th.consecutive > 0 && l.cohortRecoveredSince(th) {
		if rho := l.cohortCorrelation(); rho > 0.5 {
			// The tool's own mask was its health check's guess at the outage's length; its
			// cohort's recovery is better evidence. A provider mask still holds.
			cohortUp, masked = rho, l.providerMasked(p, t)
		}
	}
	if l.cfg.Probe && th.consecutive > 0 && !masked {
		return prior, false // the re-probe after a mask
	}
	k := l.decay(th.last, t)
	s, f := th.s*k, th.f*k
	r := (s + m*prior) / (s + f + m)
	if (l.cfg.RecoveryPrior > 0 || cohortUp > 0) && th.consecutive > 0 {
		// Down at its last call: up again with the fleet's recovery probability since then
		// (or its cohort's, once a member recovered), and then as reliable as the counts say
		// (taken without the outage's own failures).
		up := 0.0
		if l.cfg.RecoveryPrior > 0 {
			up = -math.Expm1(-l.recoveryRate() * float64(t-th.lastFail))
		}
		up = math.Max(up, cohortUp)
		r = up * l.beforeOutage(th, prior, t)
	}
	if th.consecutive == 0 { // a tool down itself is judged by its own outage
		r *= l.siblingUp(p, t)
	}
	return r, masked
}

// providerMasked reports whether provider p (−1: none) is masked at step t.
func (l *HealthLayer) providerMasked(p, t int) bool {
	return p >= 0 && p < len(l.provs) && t < l.provs[p].maskedUntil
}

// siblingUp is the probability that provider p is not down as a whole at step t: 1 − ρ̂·(still
// down) while a tool of p has failed and none succeeded since, else 1.
func (l *HealthLayer) siblingUp(p, t int) float64 {
	if l.cfg.SiblingStrength == 0 || p < 0 || p >= len(l.provs) || !l.provs[p].suspect {
		return 1
	}
	rho := l.siblingCorrelation()
	if rho <= 0.5 {
		// Siblings of a failed tool fail no more often than not: failures that strike many
		// tools at once but independently (every tool not called since is as likely down)
		// look like this too, and discounting only the siblings would steer away from them
		// for nothing.
		return 1
	}
	if l.cfg.RecoveryPrior > 0 {
		rho *= math.Exp(-l.recoveryRate() * float64(t-l.provs[p].lastFail))
	}
	return 1 - rho
}

// siblingCorrelation is ρ̂: how often a tool failed when called while a sibling was down, with
// sibling_strength prior pairs at 0.
func (l *HealthLayer) siblingCorrelation() float64 {
	return l.siblingFails / (l.siblingCalls + l.cfg.SiblingStrength)
}

// cohortRecoveredSince reports whether an outage of th's incident cohort (begun in the same
// window of cohort_window steps as th's current outage, or the one before or after) was seen
// to end after th's last failure.
func (l *HealthLayer) cohortRecoveredSince(th *toolHealth) bool {
	w := l.cfg.CohortWindow
	if w == 0 || l.cohortRecovered == nil {
		return false
	}
	b := th.outageStart / w
	for _, nb := range [3]int{b - 1, b, b + 1} {
		if at, ok := l.cohortRecovered[nb]; ok && at > th.lastFail {
			return true
		}
	}
	return false
}

// cohortCorrelation is ρ̂_c: how often a tool executed when called while down since before a
// recovery of its cohort, with cohort_strength prior calls at 1/2.
func (l *HealthLayer) cohortCorrelation() float64 {
	k := l.cfg.CohortStrength
	if k == 0 {
		k = 1
	}
	return (l.cohortUps + k/2) / (l.cohortCalls + k)
}

// providerActs says whether the provider level pools and masks: always, unless
// provider_learned waits for ρ̂ > 1/2.
func (l *HealthLayer) providerActs() bool {
	return !l.cfg.ProviderLearned || l.siblingCorrelation() > 0.5
}

// recoveryRate is μ̂ = (recoveries + k)/(down-time + k·M): outages per step of down-time.
func (l *HealthLayer) recoveryRate() float64 {
	k := l.cfg.RecoveryStrength
	if k == 0 {
		k = 1
	}
	return (l.recoveries + k) / (l.downTime + k*l.cfg.RecoveryPrior)
}

// Update implements Reliability.
func (l *HealthLayer) Update(tool, t int, executed bool) {
	l.tools = grow(l.tools, tool)
	th := &l.tools[tool]
	k := l.decay(th.last, t)
	th.s, th.f, th.last = th.s*k, th.f*k, t
	y := 0.0
	if executed {
		y = 1
	}
	if th.s+th.f < l.cfg.PoolEvidence {
		l.pool += l.cfg.PoolRate * (y - l.pool)
	}
	incidentCall := false
	if l.cfg.IncidentProbe > 0 {
		if l.cfg.IncidentPhase > 0 && (!executed || l.ofFleet(th, l.incidentDownAt(th), t)) {
			// Any failure, and an execution of one of the fleet's tools: what the fleet's pace
			// must explain.
			l.phase.observe(t, executed, l.cfg.IncidentPhase)
		}
		incidentCall = l.incidentUpdate(th, t, executed)
	}
	wasDown := th.consecutive > 0
	// The outage lasted at least until now. A probe or a lifted call is the incident's
	// evidence (its resolution, ρ̂_i), made on the incident's schedule or because another tool
	// came back, and stays out of μ̂, which prices re-probing one tool on its own.
	if wasDown && !incidentCall {
		l.downTime += float64(t - th.observed)
		th.observed = t
		if executed {
			l.recoveries++
		}
		if l.cohortRecoveredSince(th) { // evidence on whether a cohort's recovery is its members'
			l.cohortCalls++
			if executed {
				l.cohortUps++
			}
		}
		if executed && l.cfg.CohortWindow > 0 {
			if l.cohortRecovered == nil {
				l.cohortRecovered = map[int]int{}
			}
			l.cohortRecovered[th.outageStart/l.cfg.CohortWindow] = t
		}
	}
	if executed {
		th.s++
		th.consecutive = 0
	} else {
		if th.consecutive == 0 {
			th.observed, th.outageStart, th.fBefore = t, t, th.f
		}
		th.lastFail = t
		th.f++
		if l.cfg.ResetOnFailure {
			th.s = 0
		}
		th.consecutive++
		if l.cfg.MaskBase > 0 {
			th.maskedUntil = t + 1 + l.backoff(th.consecutive)
		}
	}
	p := l.providerOf(tool)
	if p < 0 || (l.cfg.ProviderStrength == 0 && l.cfg.ProviderMaskAfter == 0 && l.cfg.SiblingStrength == 0) {
		return
	}
	l.provs = grow(l.provs, p)
	ph := &l.provs[p]
	if ph.suspect && !wasDown { // a call while a sibling was down: evidence of correlation
		l.siblingCalls++
		if !executed {
			l.siblingFails++
		}
	}
	k = l.decay(ph.last, t)
	ph.s, ph.f, ph.last = ph.s*k, ph.f*k, t
	if executed {
		ph.s++
		ph.failedTools = nil
		ph.consecutive = 0
		ph.suspect = false
		if l.cfg.ProviderSuccessUnmasks {
			ph.maskedUntil = 0
		}
		return
	}
	// Suspicion dates from a tool's first failure of its outage: re-probes of a tool that stays
	// down alone must not keep its healthy siblings under suspicion for ever.
	if !wasDown || !ph.suspect {
		ph.suspect, ph.lastFail = true, t
	}
	// Only correlated failures count against the provider: a second distinct tool failing with
	// no success of the provider in between. A tool that breaks alone (a bad release, a revoked
	// key) says nothing about its siblings, and counting it would steer traffic away from
	// healthy tools.
	if ph.failedTools == nil {
		ph.failedTools = map[int]bool{}
	}
	ph.failedTools[tool] = true
	// After a provider mask and no success since, the first failure (the re-probe) is enough.
	if len(ph.failedTools) < 2 && ph.consecutive == 0 {
		return
	}
	ph.f++
	if l.cfg.ProviderMaskAfter > 0 && l.cfg.MaskBase > 0 && l.providerActs() && (len(ph.failedTools) >= l.cfg.ProviderMaskAfter || ph.consecutive > 0) {
		ph.consecutive++
		ph.maskedUntil = t + 1 + l.backoff(ph.consecutive)
		ph.failedTools = nil
	}
}

// incidentDownAt is the step since which th is taken as down: its last failure while it is
// down itself, the relapse of the incident that brought it back if it has not executed since,
// else −1.
func (l *HealthLayer) incidentDownAt(th *toolHealth) int {
	if th.consecutive > 0 {
		if l.inc.relapsedOf > th.lastFail { // brought back, then taken down again, uncalled
			return l.inc.relapsed
		}
		return th.lastFail
	}
	if l.incMemberAt(th, l.inc.relapsed) && l.inc.relapsed > th.lastOK {
		return l.inc.relapsed
	}
	return -1
}

// ofFleet reports whether th is one of the fleet's tools at t, for its pace (incident_phase):
// down (since step down, from incidentDownAt; −1: up) or a member of its incidents.
func (l *HealthLayer) ofFleet(th *toolHealth, down, t int) bool {
	return down >= 0 || l.incMemberAt(th, t)
}

// incMemberAt reports whether th, up at its last call, belongs to the fleet's incidents at t:
// it came back from an outage less than a half-life before t.
func (l *HealthLayer) incMemberAt(th *toolHealth, t int) bool {
	return th.incMember && l.withinHalfLife(th.recovered, t)
}

// withinHalfLife reports whether step since is less than a half-life before t (always, with
// no half-life).
func (l *HealthLayer) withinHalfLife(since, t int) bool {
	return l.cfg.HalfLife == 0 || float64(t-since) < l.cfg.HalfLife
}

// beforeOutage is th's estimate at t from its counts without its current outage's failures
// (all its counts when it is up): as reliable as it was before it went down.
func (l *HealthLayer) beforeOutage(th *toolHealth, prior float64, t int) float64 {
	m := l.cfg.PriorStrength
	k := l.decay(th.last, t)
	s, f := th.s*k, th.f*k
	if th.consecutive > 0 {
		f = th.fBefore * l.decay(th.outageStart, t)
	}
	return (s + m*prior) / (s + f + m)
}

// resolvedSince reports whether the latest fleet event after step down (−1: the tool is not
// down) is a resolution.
func (l *HealthLayer) resolvedSince(down int) bool {
	return down >= 0 && l.inc.resolved > down && l.inc.resolved > l.inc.relapsed
}

// incidentLifted reports whether a tool down since step down is up again by the incident's
// resolution: resolvedSince(down), and the incidents act.
func (l *HealthLayer) incidentLifted(down int, acts bool) bool {
	return l.resolvedSince(down) && acts
}

// inEvidenceWindow reports whether a call at t is evidence on ρ̂_i under
// incident_evidence_window: within D steps of the resolution, or later while no failure has
// reopened the incident (always, with the option off).
func (l *HealthLayer) inEvidenceWindow(t int) bool {
	return !l.cfg.IncidentEvidenceWindow || t-l.inc.resolved <= l.cfg.IncidentProbe || !l.inc.open
}

// incidentActs reports whether the fleet incidents act at t: ρ̂_i = rho reaches 1/2, or with
// incident_gate_errors z, ρ̂_i plus z standard errors of it does.
func (l *HealthLayer) incidentActs(rho float64, t int) bool {
	z := l.cfg.IncidentGateErrors
	if z == 0 || rho >= 0.5 {
		return rho >= 0.5
	}
	n := l.inc.calls*l.decay(l.inc.last, t) + 1
	return rho+z*math.Sqrt(rho*(1-rho)/n) >= 0.5
}

// incidentCorrelation is ρ̂_i: how often a tool down since before a resolution executed when
// called, with one prior call at incident_prior (1/2 unless set), the evidence decayed with the
// half-life.
func (l *HealthLayer) incidentCorrelation(t int) float64 {
	k := l.decay(l.inc.last, t)
	prior := l.cfg.IncidentPrior
	if prior == 0 {
		prior = 0.5
	}
	return (l.inc.ups*k + prior) / (l.inc.calls*k + 1)
}

// incidentEstimate is th's estimate when the fleet's incident decides it: lifted by a
// resolution, offered as a probe, or down with its incident's relapse (masked, as its health
// check would); ok false leaves th to the usual estimate.
func (l *HealthLayer) incidentEstimate(th *toolHealth, prior float64, t int) (r float64, masked, ok bool) {
	down := l.incidentDownAt(th)
	if l.cfg.IncidentPhase > 0 && l.ofFleet(th, down, t) {
		// The fleet's pace, once learned, decides for its tools: a down-phase masks them
		// (members up at their last call included), an up-phase brings them back.
		switch state, since := l.phase.predict(t, l.cfg.IncidentPhase); state {
		case phaseDown:
			// Masked once the fleet has been seen down in this down-phase or within the
			// incidents' probe interval D; else offered as a probe, so that a fleet that has
			// stopped flapping is found up (which unlearns the pace) instead of being masked
			// for good in down-phases it no longer has. A fleet that still flaps pays one
			// failed call per down-phase at most, and none while its failures come oftener
			// than every D steps.
			if l.phase.lastDown >= since || t-l.phase.lastDown <= l.cfg.IncidentProbe {
				return 0, true, true
			}
			return l.beforeOutage(th, prior, t), false, true
		case phaseUp:
			if down >= 0 {
				return l.beforeOutage(th, prior, t), false, true
			}
		}
	}
	if down < 0 {
		return 0, false, false // up: the tool's own evidence decides
	}
	rho := l.incidentCorrelation(t)
	acts := l.incidentActs(rho, t)
	switch {
	case !acts: // outages that end one by one: the tool's own evidence decides
		return 0, false, false
	case l.incidentLifted(down, acts):
		return rho * l.beforeOutage(th, prior, t), false, true
	case l.inc.open && t >= l.inc.nextProbe:
		return l.beforeOutage(th, prior, t), false, true
	case th.consecutive == 0 || down > th.lastFail: // down with its incident's relapse, never
		// called since: the incident's probes, not the tool's own, will tell when it is back
		if q := l.earlyProbeChance(t); q > 0 {
			return q * l.beforeOutage(th, prior, t), false, true
		}
		return 0, true, true
	}
	return 0, false, false
}

// earlyProbeChance is q(t) of incident_early_probe: the probability that the fleet's outage,
// begun at a uniform step after inc.openedAfter and by the failure that opened the incident
// (its first probe, due D steps later, not yet made), lasting D steps, is over at t; 0 when the
// option is off or the first probe has been made.
func (l *HealthLayer) earlyProbeChance(t int) float64 {
	inc := &l.inc
	d := l.cfg.IncidentProbe
	opened := inc.nextProbe - d // while no probe has been made
	if !l.cfg.IncidentEarlyProbe || !inc.open || inc.probes > 0 || inc.openedAfter < 0 || inc.openedAfter >= opened {
		return 0
	}
	q := float64(t-inc.openedAfter-d) / float64(opened-inc.openedAfter)
	return math.Max(0, math.Min(1, q))
}

// incidentUpdate records one execution of th at t in the fleet's incident, before th's own
// evidence is updated, and reports whether the call was the incident's (a probe or a call of a
// tool lifted by a resolution).
func (l *HealthLayer) incidentUpdate(th *toolHealth, t int, executed bool) (incidentCall bool) {
	inc := &l.inc
	down := l.incidentDownAt(th)
	rho := l.incidentCorrelation(t)
	acts := l.incidentActs(rho, t)
	lifted := l.incidentLifted(down, acts)
	probe := !lifted && down >= 0 && inc.open && t >= inc.nextProbe && acts
	// Evidence on ρ̂_i: any call of a tool down since before the last resolution (and no relapse
	// since), lifted or called on its own estimate, so that outages that end one by one close
	// the gate even when their tools are rarely lifted.
	if l.resolvedSince(down) && l.inEvidenceWindow(t) {
		k := l.decay(inc.last, t)
		inc.calls, inc.ups, inc.last = inc.calls*k+1, inc.ups*k, t
		if executed {
			inc.ups++
		}
	}
	if executed {
		if down >= 0 {
			if !lifted { // a recovery the incident had not foreseen: it resolves
				inc.resolved, inc.open, inc.relapseFails = t, false, 0
			}
			th.incMember, th.recovered = true, t
			if th.consecutive > 0 && acts {
				// The outage's failures were the incident's: they say nothing about how
				// reliable the tool is now that it is back (unless outages end one by one,
				// as a flaky tool's do).
				th.f = th.fBefore * l.decay(th.outageStart, th.last)
			}
		}
		if lifted || l.incMemberAt(th, t) {
			inc.relapseFails, inc.memberOK = 0, t
		}
		th.lastOK = t
		return lifted || probe
	}
	member := lifted || (th.consecutive == 0 && l.incMemberAt(th, t))
	if member && inc.relapsed < inc.resolved {
		need := 2
		if l.cfg.RelapseAfterOne && inc.relapsed >= 0 && l.withinHalfLife(inc.relapsed, t) {
			need = 1 // the fleet has flapped before: its first failure is believed
		}
		if inc.relapseFails++; inc.relapseFails >= need {
			inc.relapsed, inc.relapsedOf = t, inc.resolved
		}
	}
	if probe {
		inc.probes++
		inc.nextProbe = t + l.probeInterval(inc.probes)
	}
	if !inc.open {
		inc.open, inc.probes, inc.nextProbe = true, 0, t+l.cfg.IncidentProbe
		inc.openedAfter = inc.memberOK
	}
	return lifted || probe
}

// probeInterval is the wait after an incident's p-th failed probe: D·2^p, capped; with
// incident_half_probe, D/2 after the first, then 2D − D/2 (so the plain schedule's second probe
// keeps its step, 2D after the first), then D·2^(p−1).
func (l *HealthLayer) probeInterval(p int) int {
	d := l.cfg.IncidentProbe
	if !l.cfg.IncidentHalfProbe {
		return l.doubling(d, p+1)
	}
	half := max(d/2, 1)
	switch p {
	case 1:
		return half
	case 2:
		return max(l.doubling(d, 2)-half, 1)
	}
	return l.doubling(d, p)
}

// backoff is the mask length after the c-th consecutive failure: D·2^(c−1), capped.
func (l *HealthLayer) backoff(c int) int { return l.doubling(l.cfg.MaskBase, c) }

// doubling is d·2^(c−1), capped by mask_max (and below 2^31 steps).
func (l *HealthLayer) doubling(d, c int) int {
	for i := 1; i < c && (l.cfg.MaskMax == 0 || d < l.cfg.MaskMax) && d < math.MaxInt32; i++ {
		d *= 2
	}
	if l.cfg.MaskMax > 0 {
		d = min(d, l.cfg.MaskMax)
	}
	return d
}

// Pool returns the pooled success rate p̄ (for reports and tests).
func (l *HealthLayer) Pool() float64 { return l.pool }
