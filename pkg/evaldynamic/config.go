// Package evaldynamic is the job behind `rated eval dynamic`: it resolves the configuration,
// prepares the benchmark (retrieval, priors, contexts), runs every policy under every failure
// scenario for every seed, and writes Table 2 with plots.
package evaldynamic

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
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
	// Goals, when it names a policy of the run, has goals.{md,csv,json,tex} written.
	Goals GoalsConfig `yaml:"goals" json:"goals"`
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
	// Hubness offers the calibration the query-bank hubness feature (bandit.Hubness), the
	// calibration split's queries being the bank; the fit keeps it only where the split shows
	// the effect.
	Hubness HubnessConfig `yaml:"hubness" json:"hubness"`
	// BoundAttempts are attempt budgets (attempts per step, ≥ 1) at which bounds.* states the
	// fallback oracle's bound on every policy of its class (with oracle_fallback policies only).
	BoundAttempts []float64 `yaml:"bound_attempts,omitempty" json:"bound_attempts,omitempty"`
}

// HubnessConfig configures the calibration's hubness feature.
type HubnessConfig struct {
	// Depth: the top candidates of each bank query counted (the calibration split is ranked
	// retrieval.k deep, so a larger depth counts the whole list); 0: off.
	Depth int `yaml:"depth" json:"depth"`
	// Strength: pseudo-queries at the average share behind every tool's count (> 0).
	Strength float64 `yaml:"strength" json:"strength"`
}

// offer returns the hubness feature's configuration for a fit of lists k deep over the catalog
// ids (nil: off).
func (h HubnessConfig) offer(ids []string, k int) *bandit.HubConfig {
	if h.Depth == 0 {
		return nil
	}
	return &bandit.HubConfig{Depth: min(h.Depth, k), Strength: h.Strength, Catalog: ids}
}

// LoadConfig resolves the configuration: the embedded configs/paper.yaml, then each file in
// files merged on top (maps merge, lists replace), then RATED_* environment variables
// (RATED_DYNAMIC_STEPS=2000, RATED_DYNAMIC_SEEDS=1,2) and the flags bound to v. Unknown keys and
// values of the wrong type are errors (each file is decoded alone first, so the error names the
// file), so a typo is not silently ignored. When the environment or a flag changes dynamic.steps and nothing else on
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
	// The keys the files set and every key of Config: viper lists only the former, so a key no
	// file sets (dynamic.bound_attempts, the sweep section) was refused or silently ignored.
	present := v.AllKeys()
	known := append(slices.Clone(present), configKeys(reflect.TypeFor[Config](), "")...)
	slices.Sort(known)
	set, err := checkEnvironment(slices.Compact(known), os.Environ())
	if err != nil {
		return nil, err
	}
	for key, name := range set {
		if !slices.Contains(present, key) {
			// AutomaticEnv applies only to keys viper already has.
			if err := v.BindEnv(key, name); err != nil {
				return nil, fmt.Errorf("environment %s: %w", name, err)
			}
		}
	}
	cfg, err := unmarshal(v)
	if err != nil {
		for key, name := range set {
			if strings.Contains(err.Error(), "'"+key+"'") {
				return nil, fmt.Errorf("environment %s=%q: %w", name, os.Getenv(name), err)
			}
		}
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
	if from := written.Dynamic.Steps; from <= 0 && cfg.Dynamic.Steps != from {
		// The timeline below was written for these steps; an override cannot rescue it, and the
		// summary window it fails on would be the wrong thing to name.
		return nil, fmt.Errorf("dynamic.steps = %d in the configuration files: must be > 0 (the environment or --steps override it, but the rest of the timeline was written for it)", from)
	}
	if from := written.Dynamic.Steps; cfg.Dynamic.Steps != from && from > 0 && cfg.Dynamic.Steps > 0 && sameTimeline(cfg, written) {
		cfg.scaleTimeline(from)
	}
	if err := cfg.restoreMarginNames(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// restoreMarginNames gives sweep.criterion.fsr_margins' keys the spelling of the scenarios they
// name: viper lower-cases map keys, so the margin of a scenario "Provider-20" was never found
// and the default margin applied.
func (c *Config) restoreMarginNames() error {
	if c.Sweep == nil || len(c.Sweep.Criterion.FSRMargins) == 0 {
		return nil
	}
	out := make(map[string]float64, len(c.Sweep.Criterion.FSRMargins))
	for key, m := range c.Sweep.Criterion.FSRMargins {
		name := key
		var matches []string
		for _, s := range c.Scenarios {
			if strings.EqualFold(s.Name, key) {
				matches = append(matches, s.Name)
			}
		}
		switch {
		case len(matches) == 1:
			name = matches[0]
		case len(matches) > 1:
			return fmt.Errorf("sweep.criterion.fsr_margins.%s: scenarios %s differ only in case, which the configuration's map keys lose; rename one", key, strings.Join(matches, ", "))
		}
		out[name] = m
	}
	c.Sweep.Criterion.FSRMargins = out
	return nil
}

// checkEnvironment refuses RATED_<SECTION>_<KEY> variables of a configuration section that name
// no key of it (viper ignores them: RATED_DYNAMIC_STEPZ=100 did nothing) or are empty, and
// returns the keys the environment sets with their variables. keys are the configuration's, as
// viper lists them ("dynamic.steps"); other RATED_ variables (RATED_HOME…) are not its business.
func checkEnvironment(keys []string, environ []string) (map[string]string, error) {
	sections := map[string][]string{}
	for _, k := range keys {
		sec, _, _ := strings.Cut(k, ".")
		sections[sec] = append(sections[sec], k)
	}
	set := map[string]string{}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		rest, ok := strings.CutPrefix(name, "RATED_")
		if !ok {
			continue
		}
		sec, _, _ := strings.Cut(strings.ToLower(rest), "_")
		known, ok := sections[sec]
		if !ok {
			continue
		}
		key := ""
		for _, k := range known {
			if strings.ToUpper(strings.ReplaceAll(k, ".", "_")) == rest {
				key = k
			}
		}
		if key == "" {
			slices.Sort(known)
			return nil, fmt.Errorf("environment %s: no configuration key %s.* of that name (%s's keys: %s)", name, sec, sec, strings.Join(known, ", "))
		}
		if strings.TrimSpace(value) == "" {
			return nil, fmt.Errorf("environment %s is set but empty: unset it, or give %s a value", name, key)
		}
		set[key] = name
	}
	return set, nil
}

// configKeys lists the configuration keys of t's yaml fields under prefix ("dynamic.steps"):
// nested structs give their fields, a map or any other value is one key.
func configKeys(t reflect.Type, prefix string) []string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct {
			keys = append(keys, configKeys(ft, prefix+name+".")...)
			continue
		}
		keys = append(keys, prefix+name)
	}
	return keys
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
		data, err := readConfigFile(f)
		if err != nil {
			return err
		}
		// Each file alone against the schema first, so that an unknown key or a wrong type is
		// reported with the file it is in (after merging, the error cannot say which).
		alone := viper.New()
		alone.SetConfigType("yaml")
		if err := alone.ReadConfig(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("config %s: %w", f, err)
		}
		if _, err := unmarshalFile(alone); err != nil {
			return fmt.Errorf("config %s: %w", f, err)
		}
		if err := v.MergeConfig(bytes.NewReader(data)); err != nil {
			return fmt.Errorf("config %s: %w", f, err)
		}
	}
	return nil
}

// readConfigFile reads a --config file, or the copy of a shipped one embedded in the binary
// (configs.ReadFile); a missing one lists the shipped configs.
func readConfigFile(f string) ([]byte, error) {
	data, err := configs.ReadFile(f)
	switch {
	case err == nil:
		return data, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("config %s: %w", f, err)
	}
	shipped, _ := fs.Glob(configs.Files, "*.yaml")
	return nil, fmt.Errorf("config %s: no such file, and not one of the configs embedded in the binary (configs/*.yaml: %s)", f, strings.Join(shipped, ", "))
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

// unmarshal reads v into a Config, refusing unknown keys and values of the wrong type, naming
// the key: a fractional or boolean number where an integer belongs (k: 10.7, k: true), a scalar
// where a list belongs (seeds: 3), a number where text belongs. Strings are parsed into numbers,
// booleans and comma-separated lists, since RATED_* environment variables are strings; the files
// are decoded alone first with unmarshalFile, which does not, so that there a quoted "10" is
// refused too.
func unmarshal(v *viper.Viper) (*Config, error) {
	return unmarshalWith(v, splitStrings, parseStrings, integralFloats)
}

// unmarshalFile is unmarshal for one file's values: no string is converted.
func unmarshalFile(v *viper.Viper) (*Config, error) {
	return unmarshalWith(v, integralFloats)
}

func unmarshalWith(v *viper.Viper, hooks ...mapstructure.DecodeHookFunc) (*Config, error) {
	var cfg Config
	err := v.Unmarshal(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.TagName = "yaml"
		dc.ErrorUnused = true
		dc.WeaklyTypedInput = false
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(hooks...)
	})
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	return &cfg, nil
}

// integralFloats refuses a fractional number where an integer belongs (mapstructure truncates
// 10.7 to 10) and passes whole ones (1e3) on as integers.
func integralFloats(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.Float32 && from.Kind() != reflect.Float64 {
		return data, nil
	}
	f := reflect.ValueOf(data).Float()
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return nil, fmt.Errorf("%v is not an integer", f)
		}
		return int64(f), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if f != math.Trunc(f) || f < 0 || f >= math.MaxUint64 {
			return nil, fmt.Errorf("%v is not a non-negative integer", f)
		}
		return uint64(f), nil
	}
	return data, nil
}

// splitStrings splits a comma-separated string where a list belongs (RATED_DYNAMIC_SEEDS=1,2,3);
// parseStrings then parses each element.
func splitStrings(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to.Kind() != reflect.Slice {
		return data, nil
	}
	s := reflect.ValueOf(data).String()
	if strings.TrimSpace(s) == "" {
		return []string{}, nil
	}
	parts := strings.Split(s, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts, nil
}

// parseStrings parses a string (an environment variable, a flag) where a number or a boolean
// belongs, strictly: "10.7" is no integer and "yes" no boolean.
func parseStrings(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String {
		return data, nil
	}
	s := strings.TrimSpace(reflect.ValueOf(data).String())
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, to.Bits())
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, to.Bits())
		if err != nil {
			return nil, fmt.Errorf("%q is not a non-negative integer", s)
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", s)
		}
		return b, nil
	}
	return data, nil
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
	case d.Hubness.Depth < 0:
		return fmt.Errorf("dynamic.hubness.depth = %d: must be >= 0 (0: off)", d.Hubness.Depth)
	case d.Hubness.Depth > 0 && !(d.Hubness.Strength > 0):
		return fmt.Errorf("dynamic.hubness.strength = %v: must be > 0 (pseudo-queries at the average share)", d.Hubness.Strength)
	}
	seen := make(map[uint64]bool, len(d.Seeds))
	for _, s := range d.Seeds {
		if seen[s] {
			// A repeated seed repeats the same run: it would shrink the confidence intervals
			// and count as an independent repetition in the paired tests.
			return fmt.Errorf("dynamic.seeds: seed %d listed twice (each seed is one independent repetition)", s)
		}
		seen[s] = true
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
		if onset < d.ASWindow || onset > d.Steps-d.ASWindow {
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
	if err := c.Goals.Validate(); err != nil {
		return err
	}
	for i, name := range c.Dynamic.Compare {
		if !names[name] {
			return fmt.Errorf("dynamic.compare[%d] = %q: no policy of that name (a file that replaces the policies sets dynamic.compare too, [] for none)", i, name)
		}
		if j := slices.Index(c.Dynamic.Compare, name); j < i {
			return fmt.Errorf("dynamic.compare[%d] = %q: already dynamic.compare[%d] (paired.* would hold its comparisons twice)", i, name, j)
		}
	}
	return nil
}

// Warnings are what a run with c measures or leaves out without it being an error: a scenario
// whose failure onset falls after the summary window's start (a window over the whole run is a
// deliberate choice, as in the off-policy tests; a later onset in one scenario of many is
// usually not), and goals.policy naming no policy of the run (paper.yaml's goals stay when a
// file replaces the policies), so no goals.* are written.
func (c *Config) Warnings() []string {
	var w []string
	for _, sc := range c.PreFailureInSummary() {
		counted := fmt.Sprintf("count %d pre-failure steps", min(sc.Onset(), c.Dynamic.SummaryTo)-c.Dynamic.SummaryFrom)
		if sc.Onset() >= c.Dynamic.SummaryTo {
			counted = fmt.Sprintf("count only pre-failure steps (the whole window, %d–%d, lies before the failure)", c.Dynamic.SummaryFrom+1, c.Dynamic.SummaryTo)
		}
		w = append(w, fmt.Sprintf("scenario %s: onset %d falls after dynamic.summary_from = %d, so its Post-Fail SR and FSR %s (the summary window is one for every scenario; start it at or after every onset to measure after the failure only)",
			sc.Name, sc.Onset(), c.Dynamic.SummaryFrom, counted))
	}
	if p := c.Goals.Policy; p != "" && c.policyNamed(p) == nil {
		w = append(w, fmt.Sprintf("goals.policy = %q names no policy of this run: goals.* are not written (set goals.policy to one of the policies, or \"\" to silence this)", p))
	}
	return w
}

// PreFailureInSummary lists the scenarios whose onset falls after dynamic.summary_from: their
// Post-Fail SR and FSR include pre-failure steps.
func (c *Config) PreFailureInSummary() []sim.Scenario {
	var out []sim.Scenario
	for _, s := range c.Scenarios {
		if s.Onset() > c.Dynamic.SummaryFrom {
			out = append(out, s)
		}
	}
	return out
}

// Onsets describes the scenarios' failure onsets (0-based steps): "step 2000" when they
// share one, else each onset with the scenarios it starts, in the configuration's order.
func (c *Config) Onsets() string {
	var order []int
	by := map[int][]string{}
	for _, s := range c.Scenarios {
		o := s.Onset()
		if _, ok := by[o]; !ok {
			order = append(order, o)
		}
		by[o] = append(by[o], s.Name)
	}
	if len(order) == 1 {
		return fmt.Sprintf("step %d", order[0])
	}
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = fmt.Sprintf("step %d (%s)", o, strings.Join(by[o], ", "))
	}
	return strings.Join(parts, "; ")
}

// Summary returns the Post-Fail summary window.
func (c *Config) Summary() metrics.Window {
	return metrics.Window{From: c.Dynamic.SummaryFrom, To: c.Dynamic.SummaryTo}
}
