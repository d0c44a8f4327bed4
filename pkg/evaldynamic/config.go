// Package evaldynamic is the job behind `rated eval dynamic`: it resolves the configuration,
// prepares the benchmark (retrieval, priors, contexts), runs every policy under every failure
// scenario for every seed, and writes Table 2 with plots.
package evaldynamic

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/rated-dev/rated/configs"
	"github.com/rated-dev/rated/internal/cfgcheck"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/sim"
)

// Config is the resolved configuration of a dynamic evaluation.
type Config struct {
	Retrieval RetrievalConfig      `yaml:"retrieval" json:"retrieval"`
	Fusion    bandit.FusionWeights `yaml:"fusion" json:"fusion"`
	Prior     catalog.PriorConfig  `yaml:"prior" json:"prior"`
	Dynamic   DynamicConfig        `yaml:"dynamic" json:"dynamic"`
	Scenarios []sim.Scenario       `yaml:"scenarios" json:"scenarios"`
	// Protocols are the feedback protocols every policy runs under (configs/paper.yaml: the
	// paper's execution protocol alone).
	Protocols []sim.Protocol `yaml:"protocols" json:"protocols"`
	Policies  []bandit.Spec  `yaml:"policies" json:"policies"`
	// Sweep, when set, is the hyper-parameter sweep of `rated eval dynamic --sweep`.
	Sweep *SweepConfig `yaml:"sweep,omitempty" json:"sweep,omitempty"`
}

// RetrievalConfig configures the first stage.
type RetrievalConfig struct {
	K            int    `yaml:"k" json:"k"`
	Retriever    string `yaml:"retriever" json:"retriever"`
	Encoder      string `yaml:"encoder" json:"encoder"`
	ContextDim   int    `yaml:"context_dim" json:"context_dim"`
	SemanticNorm string `yaml:"semantic_norm" json:"semantic_norm"`
	// ContextCenter subtracts the mean query vector from every context (see BuildWorld).
	ContextCenter bool    `yaml:"context_center" json:"context_center"`
	Tau           float64 `yaml:"tau" json:"tau"`
}

// DynamicConfig configures the step loop and the measures.
type DynamicConfig struct {
	Steps       int      `yaml:"steps" json:"steps"`
	SummaryFrom int      `yaml:"summary_from" json:"summary_from"`
	SummaryTo   int      `yaml:"summary_to" json:"summary_to"`
	ASWindow    int      `yaml:"as_window" json:"as_window"`
	Seeds       []uint64 `yaml:"seeds" json:"seeds"`
	Split       string   `yaml:"split" json:"split"`
	CurveStride int      `yaml:"curve_stride" json:"curve_stride"`
	// Compare names the policies that paired.{md,json} compares with every other policy (paired
	// over seeds, which share each stream and schedule).
	Compare []string `yaml:"compare" json:"compare"`
	// Calibration is the labelled split P(relevant | retrieval features) is fitted on ("dev";
	// never the evaluated split unless that is dev itself).
	Calibration string `yaml:"calibration" json:"calibration"`
	// BoundAttempts are attempt budgets (attempts per step, ≥ 1) at which bounds.* states the
	// fallback oracle's bound on every policy of its class (with oracle_fallback policies only).
	BoundAttempts []float64 `yaml:"bound_attempts,omitempty" json:"bound_attempts,omitempty"`
}

// LoadConfig resolves the configuration: the embedded configs/paper.yaml, then each file in
// files merged on top (maps merge, lists replace), then RATED_* environment variables
// (RATED_DYNAMIC_STEPS=2000) and the flags bound to v. Unknown keys are errors, so a typo is
// not silently ignored. When the environment or a flag changes dynamic.steps and nothing else on
// the timeline, the onset, summary window and AS window scale with it (scaleTimeline), so that
// --steps alone gives a shorter run of the same protocol; otherwise a timeline that no longer
// fits is refused naming the keys to set.
func LoadConfig(v *viper.Viper, files []string) (*Config, error) {
	if err := readFiles(v, files); err != nil {
		return nil, err
	}
	v.SetEnvPrefix("RATED")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	cfg, err := unmarshal(v)
	if err != nil {
		return nil, err
	}
	// The same files without environment or flags: what the timeline was written for.
	filesOnly := viper.New()
	if err := readFiles(filesOnly, files); err != nil {
		return nil, err
	}
	written, err := unmarshal(filesOnly)
	if err != nil {
		return nil, err
	}
	if from := written.Dynamic.Steps; cfg.Dynamic.Steps != from && from > 0 && cfg.Dynamic.Steps > 0 && sameTimeline(cfg, written) {
		cfg.scaleTimeline(from)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readFiles reads the embedded configs/paper.yaml into v and merges each file over it.
func readFiles(v *viper.Viper, files []string) error {
	base, err := configs.Files.ReadFile("paper.yaml")
	if err != nil {
		return err
	}
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(base)); err != nil {
		return fmt.Errorf("embedded configs/paper.yaml: %w", err)
	}
	for _, f := range files {
		v.SetConfigFile(f)
		if err := v.MergeInConfig(); err != nil {
			return fmt.Errorf("config %s: %w", f, err)
		}
	}
	return nil
}

// PaperConfig returns the embedded configs/paper.yaml alone: no files, environment or flags.
func PaperConfig() (*Config, error) {
	v := viper.New()
	if err := readFiles(v, nil); err != nil {
		return nil, err
	}
	return decode(v)
}

// decode unmarshals v into a Config, refusing unknown keys, and validates it.
func decode(v *viper.Viper) (*Config, error) {
	cfg, err := unmarshal(v)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// unmarshal reads v into a Config, refusing unknown keys.
func unmarshal(v *viper.Viper) (*Config, error) {
	var cfg Config
	err := v.Unmarshal(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.TagName = "yaml"
		dc.ErrorUnused = true
		dc.WeaklyTypedInput = true
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(mapstructure.StringToSliceHookFunc(","))
	})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return &cfg, nil
}

// Validate refuses a configuration that cannot run, naming the key, before any work starts.
func (c *Config) Validate() error {
	// NaN and ±Inf first: they pass range checks written as "v < 0" and fail only when the
	// results are encoded, after the whole run.
	if err := cfgcheck.Finite("", c); err != nil {
		return err
	}
	r, d := c.Retrieval, c.Dynamic
	switch {
	case !(r.Tau > 0):
		return fmt.Errorf("retrieval.tau = %v: the InfoNCE temperature must be > 0", r.Tau)
	case r.K <= 0:
		return fmt.Errorf("retrieval.k = %d: must be > 0", r.K)
	case r.Retriever != "auto" && r.Retriever != "bm25" && r.Retriever != "dense":
		return fmt.Errorf("retrieval.retriever = %q: must be auto, bm25 or dense", r.Retriever)
	case r.ContextDim <= 0:
		return fmt.Errorf("retrieval.context_dim = %d: must be > 0", r.ContextDim)
	case r.SemanticNorm != "auto" && r.SemanticNorm != "none" && r.SemanticNorm != "max":
		return fmt.Errorf("retrieval.semantic_norm = %q: must be auto, none or max", r.SemanticNorm)
	case d.Steps <= 0:
		return fmt.Errorf("dynamic.steps = %d: must be > 0", d.Steps)
	case d.SummaryFrom < 0 || d.SummaryTo > d.Steps || d.SummaryFrom >= d.SummaryTo:
		return fmt.Errorf("dynamic.summary_from/summary_to = [%d, %d): must lie inside [0, dynamic.steps=%d)", d.SummaryFrom, d.SummaryTo, d.Steps)
	case d.ASWindow <= 0:
		return fmt.Errorf("dynamic.as_window = %d: must be > 0", d.ASWindow)
	case len(d.Seeds) == 0:
		return fmt.Errorf("dynamic.seeds: at least one seed is needed")
	case d.Split == "":
		return fmt.Errorf("dynamic.split: name the qrels split to evaluate on")
	case d.CurveStride <= 0:
		return fmt.Errorf("dynamic.curve_stride = %d: must be > 0", d.CurveStride)
	}
	for i, a := range d.BoundAttempts {
		if a < 1 {
			return fmt.Errorf("dynamic.bound_attempts[%d] = %v: an attempt budget is at least 1 attempt per step", i, a)
		}
	}
	if err := c.Fusion.Validate("fusion"); err != nil {
		return err
	}
	if err := c.Prior.Validate(); err != nil {
		return err
	}
	if len(c.Scenarios) == 0 {
		return fmt.Errorf("scenarios: at least one scenario is needed")
	}
	names := map[string]bool{}
	for i, s := range c.Scenarios {
		key := fmt.Sprintf("scenarios[%d]", i)
		if err := s.Validate(key, d.Steps); err != nil {
			return err
		}
		if names[s.Name] {
			return fmt.Errorf("%s.name: duplicate scenario %q", key, s.Name)
		}
		names[s.Name] = true
		onset := s.Onset()
		if onset < d.ASWindow || onset+d.ASWindow > d.Steps {
			return fmt.Errorf("%s: onset %d leaves no full dynamic.as_window (%d) before and after it in %d steps", key, onset, d.ASWindow, d.Steps)
		}
		if math.IsNaN(s.FailureRate) || s.FailureRate < 0 || s.FailureRate >= 1 {
			return fmt.Errorf("%s.failure_rate = %v: ρ must be in [0, 1)", key, s.FailureRate)
		}
	}
	if len(c.Protocols) == 0 {
		return fmt.Errorf("protocols: at least one feedback protocol is needed")
	}
	names = map[string]bool{}
	for i, p := range c.Protocols {
		key := fmt.Sprintf("protocols[%d]", i)
		if err := p.Validate(key); err != nil {
			return err
		}
		if names[p.Name] {
			return fmt.Errorf("%s.name: duplicate protocol %q", key, p.Name)
		}
		names[p.Name] = true
	}
	if len(c.Policies) == 0 {
		return fmt.Errorf("policies: at least one policy is needed")
	}
	names = map[string]bool{}
	for i, p := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		if err := p.Validate(key); err != nil {
			return err
		}
		if names[p.Name] {
			return fmt.Errorf("%s.name: duplicate policy %q", key, p.Name)
		}
		names[p.Name] = true
	}
	if len(d.BoundAttempts) > 0 && !slices.ContainsFunc(c.Policies, func(p bandit.Spec) bool { return p.Kind == "oracle_fallback" }) {
		return fmt.Errorf("dynamic.bound_attempts: the bounds come from oracle_fallback policies, and none is configured")
	}
	for i, name := range c.Dynamic.Compare {
		if !names[name] {
			return fmt.Errorf("dynamic.compare[%d] = %q: no policy of that name (a file that replaces the policies sets dynamic.compare too, [] for none)", i, name)
		}
	}
	return nil
}

// Summary returns the Post-Fail summary window.
func (c *Config) Summary() metrics.Window {
	return metrics.Window{From: c.Dynamic.SummaryFrom, To: c.Dynamic.SummaryTo}
}
