package evaldynamic

import (
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/sim"
)

// SweepConfig is a hyper-parameter sweep of one policy on a tuning split (`rated eval dynamic
// --sweep`): every combination of the parameter values runs under every scenario and protocol
// of the configuration, beside the reference policies of the criterion, and the setting is
// chosen by the stated criterion. The evaluated split must not be test.
type SweepConfig struct {
	// Policy names the policy of `policies` whose spec is varied.
	Policy string `yaml:"policy" json:"policy"`
	// Params are the spec keys to vary (dotted paths into the policy spec, e.g.
	// reliability.mask_base, relevance.alpha, gamma, weights) and their values.
	Params []SweepParam `yaml:"params" json:"params"`
	// Criterion chooses the setting.
	Criterion SweepCriterion `yaml:"criterion" json:"criterion"`
}

// SweepParam is one swept key and its values (any YAML values the key accepts).
type SweepParam struct {
	Key    string `yaml:"key" json:"key"`
	Values []any  `yaml:"values" json:"values"`
}

// SweepCriterion: maximise the mean Post-Fail SR over the scenarios (under Protocol, or every
// protocol when empty) among the settings whose FSR stays within FSRMargin of the FSRReference
// policy's and whose pre-failure SR stays within PreMargin of the PreReference policy's in every
// scenario; when no setting qualifies, the one with the fewest violations, then the highest SR.
type SweepCriterion struct {
	Protocol     string  `yaml:"protocol" json:"protocol"`
	FSRReference string  `yaml:"fsr_reference" json:"fsr_reference"`
	FSRMargin    float64 `yaml:"fsr_margin" json:"fsr_margin"`
	// FSRMargins overrides FSRMargin per scenario (e.g. a negative margin where the policy must
	// stay below the reference).
	FSRMargins   map[string]float64 `yaml:"fsr_margins" json:"fsr_margins,omitempty"`
	PreReference string             `yaml:"pre_reference" json:"pre_reference"`
	PreMargin    float64            `yaml:"pre_margin" json:"pre_margin"`
}

// SweepPoint is one setting's outcome.
type SweepPoint struct {
	Setting map[string]string `json:"setting"`
	Policy  string            `json:"policy"`
	// MeanSR is the objective; SR, FSR and PreSR are per scenario (over the criterion's
	// protocols).
	MeanSR     float64            `json:"mean_sr"`
	SR         map[string]float64 `json:"sr"`
	FSR        map[string]float64 `json:"fsr"`
	PreSR      map[string]float64 `json:"pre_sr"`
	Violations []string           `json:"violations"`
	Chosen     bool               `json:"chosen"`
}

// SweepResult is what a sweep wrote.
type SweepResult struct {
	Points []SweepPoint `json:"points"`
	Chosen SweepPoint   `json:"chosen"`
	// ChosenSpec is the chosen policy spec, ready to paste into a configuration.
	ChosenSpec bandit.Spec `json:"chosen_spec"`
	Criterion  string      `json:"criterion"`
	// Provenance is the rated build, asset home, retriever and encoder digests of the sweep.
	Provenance provenance.Record `json:"provenance"`
}

// CheckSweep checks the sweep section against the configuration before any work (Sweep
// checks it again).
func (c *Config) CheckSweep() error {
	s := c.Sweep
	if s == nil {
		return fmt.Errorf("sweep: the configuration has no sweep section")
	}
	if c.Dynamic.Split == "test" {
		return fmt.Errorf("sweep: dynamic.split = test: tune on dev (or another non-test split) only; test reports the chosen setting")
	}
	base := c.policyNamed(s.Policy)
	if base == nil {
		return fmt.Errorf("sweep.policy = %q: no policy of that name", s.Policy)
	}
	if len(s.Params) == 0 {
		return fmt.Errorf("sweep.params: at least one parameter to vary is needed")
	}
	keys := map[string]int{}
	for i, p := range s.Params {
		if p.Key == "" || len(p.Values) == 0 {
			return fmt.Errorf("sweep.params[%d]: a key and at least one value are needed", i)
		}
		if j, ok := keys[p.Key]; ok {
			return fmt.Errorf("sweep.params[%d].key = %q: already varied by sweep.params[%d] (the later values would replace the earlier in every setting)", i, p.Key, j)
		}
		keys[p.Key] = i
	}
	for _, ref := range []struct{ key, name string }{{"sweep.criterion.fsr_reference", s.Criterion.FSRReference},
		{"sweep.criterion.pre_reference", s.Criterion.PreReference}} {
		if ref.name != "" && c.policyNamed(ref.name) == nil {
			return fmt.Errorf("%s = %q: no policy of that name", ref.key, ref.name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Criterion.FSRMargins)) {
		if !slices.ContainsFunc(c.Scenarios, func(sc sim.Scenario) bool { return sc.Name == name }) {
			return fmt.Errorf("sweep.criterion.fsr_margins.%s: no scenario of that name (a margin for it would never apply)", name)
		}
	}
	if p := s.Criterion.Protocol; p != "" {
		found := false
		for _, pr := range c.Protocols {
			found = found || pr.Name == p
		}
		if !found {
			return fmt.Errorf("sweep.criterion.protocol = %q: no protocol of that name", p)
		}
	}
	// Every combination must make a valid spec: fail now, naming the setting.
	_, err := sweepSpecs(*base, s.Params)
	return err
}

func (c *Config) policyNamed(name string) *bandit.Spec {
	for i := range c.Policies {
		if c.Policies[i].Name == name {
			return &c.Policies[i]
		}
	}
	return nil
}

type sweepSpec struct {
	spec    bandit.Spec
	setting map[string]string
}

// sweepSpecs returns one spec per combination of the parameter values (full factorial).
func sweepSpecs(base bandit.Spec, params []SweepParam) ([]sweepSpec, error) {
	var raw map[string]any
	b, err := yaml.Marshal(base)
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	var out []sweepSpec
	idx := make([]int, len(params))
	for {
		m := deepCopy(raw).(map[string]any)
		setting := map[string]string{}
		var label []string
		for i, p := range params {
			v := p.Values[idx[i]]
			setPath(m, strings.Split(p.Key, "."), v)
			text := strings.TrimSpace(yamlInline(v))
			setting[p.Key] = text
			label = append(label, p.Key+"="+text)
		}
		b, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		var spec bandit.Spec
		dec := yaml.NewDecoder(strings.NewReader(string(b)))
		dec.KnownFields(true)
		if err := dec.Decode(&spec); err != nil {
			return nil, fmt.Errorf("sweep setting %s: %w", strings.Join(label, ", "), err)
		}
		spec.Name = base.Name + " [" + strings.Join(label, ", ") + "]"
		if err := spec.Validate("sweep setting " + strings.Join(label, ", ")); err != nil {
			return nil, err
		}
		out = append(out, sweepSpec{spec: spec, setting: setting})
		// Next combination (odometer).
		i := len(params) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(params[i].Values) {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return out, nil
		}
	}
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[any]any: // as some YAML decoders give nested maps
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = deepCopy(x)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// setPath sets m[path...] = v, creating maps on the way.
func setPath(m map[string]any, path []string, v any) {
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[path[len(path)-1]] = v
}

func yamlInline(v any) string {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+": "+yamlInline(t[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// Sweep runs the sweep of cfg.Sweep on res and writes sweep.{md,csv,json}, chosen.yaml and one
// plot per parameter (SR and FSR against the parameter, the others at the chosen setting: the
// paper's Figure 4) into opts.OutDir.
func Sweep(ctx context.Context, cfg *Config, res Resources, opts Options) (*SweepResult, error) {
	if err := cfg.CheckSweep(); err != nil {
		return nil, err
	}
	s := cfg.Sweep
	specs, err := sweepSpecs(*cfg.policyNamed(s.Policy), s.Params)
	if err != nil {
		return nil, err
	}
	w, info, err := BuildWorld(res, cfg)
	if err != nil {
		return nil, err
	}
	var policies []bandit.Spec
	for _, ref := range []string{s.Criterion.FSRReference, s.Criterion.PreReference} {
		if ref != "" && !containsSpec(policies, ref) {
			policies = append(policies, *cfg.policyNamed(ref))
		}
	}
	for _, sp := range specs {
		policies = append(policies, sp.spec)
	}
	grid := sim.GridSpec{
		Scenarios: cfg.Scenarios, Protocols: cfg.Protocols, Policies: policies, Seeds: cfg.Dynamic.Seeds,
		Steps: cfg.Dynamic.Steps, K: cfg.Retrieval.K, Weights: cfg.Fusion,
		Summary: cfg.Summary(), ASWindow: cfg.Dynamic.ASWindow, CurveStride: cfg.Dynamic.CurveStride,
	}
	total := len(grid.Protocols) * len(grid.Scenarios) * len(grid.Policies) * len(grid.Seeds)
	done := 0
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results, err := sim.RunGrid(ctx, w, grid, workers, func() {
		done++
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	})
	if err != nil {
		return nil, err
	}
	rows := sim.Summarize(grid, results)
	out := chooseSetting(cfg, specs, rows)
	out.Provenance = opts.Provenance
	out.Provenance.Retriever, out.Provenance.Encoder = res.Retriever.Name(), provenance.EncoderOf(res.Retriever)
	if err := writeSweep(opts.OutDir, cfg, info, out, rows); err != nil {
		return nil, err
	}
	return out, nil
}

func containsSpec(specs []bandit.Spec, name string) bool {
	for _, s := range specs {
		if s.Name == name {
			return true
		}
	}
	return false
}

// chooseSetting scores every setting under the criterion and marks the chosen one.
func chooseSetting(cfg *Config, specs []sweepSpec, rows []sim.Row) *SweepResult {
	cr := cfg.Sweep.Criterion
	type agg struct{ sr, fsr, pre map[string][]float64 }
	byPolicy := map[string]*agg{}
	for _, r := range rows {
		if cr.Protocol != "" && r.Protocol != cr.Protocol {
			continue
		}
		a := byPolicy[r.Method]
		if a == nil {
			a = &agg{sr: map[string][]float64{}, fsr: map[string][]float64{}, pre: map[string][]float64{}}
			byPolicy[r.Method] = a
		}
		a.sr[r.Scenario] = append(a.sr[r.Scenario], r.PostFailSR.Mean)
		a.fsr[r.Scenario] = append(a.fsr[r.Scenario], r.FSR.Mean)
		a.pre[r.Scenario] = append(a.pre[r.Scenario], r.PreFailSR.Mean)
	}
	mean := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s / float64(len(xs))
	}
	res := &SweepResult{Criterion: cr.describe()}
	for _, sp := range specs {
		a := byPolicy[sp.spec.Name]
		pt := SweepPoint{Setting: sp.setting, Policy: sp.spec.Name, SR: map[string]float64{}, FSR: map[string]float64{}, PreSR: map[string]float64{}}
		for _, sc := range cfg.Scenarios {
			pt.SR[sc.Name], pt.FSR[sc.Name], pt.PreSR[sc.Name] = mean(a.sr[sc.Name]), mean(a.fsr[sc.Name]), mean(a.pre[sc.Name])
			pt.MeanSR += pt.SR[sc.Name] / float64(len(cfg.Scenarios))
			if ref := byPolicy[cr.FSRReference]; ref != nil {
				margin, ok := cr.FSRMargins[sc.Name]
				if !ok {
					margin = cr.FSRMargin
				}
				if limit := mean(ref.fsr[sc.Name]) + margin; pt.FSR[sc.Name] > limit+1e-12 {
					pt.Violations = append(pt.Violations, fmt.Sprintf("%s FSR %.1f%% > %.1f%%", sc.Name, 100*pt.FSR[sc.Name], 100*limit))
				}
			}
			if ref := byPolicy[cr.PreReference]; ref != nil {
				if limit := mean(ref.pre[sc.Name]) - cr.PreMargin; pt.PreSR[sc.Name] < limit-1e-12 {
					pt.Violations = append(pt.Violations, fmt.Sprintf("%s pre-failure SR %.1f%% < %.1f%%", sc.Name, 100*pt.PreSR[sc.Name], 100*limit))
				}
			}
		}
		res.Points = append(res.Points, pt)
	}
	best := 0
	for i, p := range res.Points {
		b := res.Points[best]
		if len(p.Violations) < len(b.Violations) || (len(p.Violations) == len(b.Violations) && p.MeanSR > b.MeanSR+1e-12) {
			best = i
		}
	}
	res.Points[best].Chosen = true
	res.Chosen = res.Points[best]
	res.ChosenSpec = specs[best].spec
	res.ChosenSpec.Name = cfg.Sweep.Policy
	return res
}

func (cr SweepCriterion) describe() string {
	proto := "every protocol"
	if cr.Protocol != "" {
		proto = "the " + cr.Protocol + " protocol"
	}
	d := fmt.Sprintf("maximise the mean Post-Fail SR over the scenarios under %s", proto)
	var cons []string
	if cr.FSRReference != "" {
		c := fmt.Sprintf("FSR ≤ %s's + %.1f points", cr.FSRReference, 100*cr.FSRMargin)
		names := make([]string, 0, len(cr.FSRMargins))
		for n := range cr.FSRMargins {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			c += fmt.Sprintf(" (%s: %+.1f)", n, 100*cr.FSRMargins[n])
		}
		cons = append(cons, c)
	}
	if cr.PreReference != "" {
		cons = append(cons, fmt.Sprintf("pre-failure SR ≥ %s's − %.1f points", cr.PreReference, 100*cr.PreMargin))
	}
	if len(cons) > 0 {
		d += ", subject to " + strings.Join(cons, " and ") + " in every scenario (if no setting meets them: fewest violations, then highest SR)"
	}
	return d
}

func writeSweep(dir string, cfg *Config, info WorldInfo, res *SweepResult, rows []sim.Row) error {
	t := &report.Table{Title: fmt.Sprintf("Sweep of %s on the %s split (%s, %d tools, %d queries, %d seeds)",
		cfg.Sweep.Policy, cfg.Dynamic.Split, info.Bench, info.Tools, info.Queries, len(cfg.Dynamic.Seeds))}
	for _, p := range cfg.Sweep.Params {
		t.Columns = append(t.Columns, p.Key)
	}
	t.Columns = append(t.Columns, "mean SR")
	for _, sc := range cfg.Scenarios {
		t.Columns = append(t.Columns, sc.Name+" SR", sc.Name+" FSR")
	}
	t.Columns = append(t.Columns, "violations", "chosen")
	for _, p := range res.Points {
		var line []string
		for _, sp := range cfg.Sweep.Params {
			line = append(line, p.Setting[sp.Key])
		}
		line = append(line, report.Percent(p.MeanSR))
		for _, sc := range cfg.Scenarios {
			line = append(line, report.Percent(p.SR[sc.Name]), report.Percent(p.FSR[sc.Name]))
		}
		mark := ""
		if p.Chosen {
			mark = "✔"
		}
		line = append(line, fmt.Sprint(len(p.Violations)), mark)
		t.Rows = append(t.Rows, line)
	}
	t.Notes = []string{"Criterion: " + res.Criterion + "."}
	if cfg.Sweep.Criterion.FSRReference != "" || cfg.Sweep.Criterion.PreReference != "" {
		// Only the criterion's reference policies run beside the sweep's points.
		t.Notes = append(t.Notes, "Reference rows (same seeds): see sweep.json.")
	}
	if err := report.WriteFiles(dir, "sweep", t, struct {
		*SweepResult
		Rows []sim.Row `json:"rows"`
	}{res, rows}); err != nil {
		return err
	}
	chosen, err := yaml.Marshal([]bandit.Spec{res.ChosenSpec})
	if err != nil {
		return err
	}
	header := "# Chosen by `rated eval dynamic --sweep` on the " + cfg.Dynamic.Split + " split.\n# Criterion: " + res.Criterion + ".\npolicies:\n"
	if err := atomicfile.WriteBytes(filepath.Join(dir, "chosen.yaml"), []byte(header+indent(string(chosen)))); err != nil {
		return err
	}
	return writeSweepPlots(dir, cfg, res)
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

// writeSweepPlots draws, per parameter, the Post-Fail SR and the FSR of every scenario (and
// their mean) against the parameter's values with every other parameter at the chosen setting,
// one plot for each measure with its own scale (the paper's Figure 4).
func writeSweepPlots(dir string, cfg *Config, res *SweepResult) error {
	clean := strings.NewReplacer("/", "-", " ", "-", ".", "-")
	for _, param := range cfg.Sweep.Params {
		var pts []SweepPoint
		var xs []float64
		for _, p := range res.Points {
			same := true
			for k, v := range p.Setting {
				if k != param.Key && v != res.Chosen.Setting[k] {
					same = false
				}
			}
			if !same {
				continue
			}
			x, err := parseFloat(p.Setting[param.Key])
			if err != nil {
				x = float64(len(xs)) // categorical values: their position in the sweep
			}
			pts, xs = append(pts, p), append(xs, x)
		}
		if len(pts) < 2 {
			continue
		}
		order := make([]int, len(xs))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return xs[order[a]] < xs[order[b]] })
		for _, m := range []struct {
			name, label string
			get         func(SweepPoint, string) float64
		}{
			{"sr", "Post-Fail SR", func(p SweepPoint, sc string) float64 { return p.SR[sc] }},
			{"fsr", "FSR", func(p SweepPoint, sc string) float64 { return p.FSR[sc] }},
		} {
			lo, hi := math.Inf(1), math.Inf(-1)
			var series []report.Series
			mean := report.Series{Label: "mean"}
			for _, sc := range cfg.Scenarios {
				s := report.Series{Label: sc.Name}
				for _, i := range order {
					v := m.get(pts[i], sc.Name)
					s.X, s.Y = append(s.X, xs[i]), append(s.Y, v)
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				series = append(series, s)
			}
			for _, i := range order {
				v := 0.0
				for _, sc := range cfg.Scenarios {
					v += m.get(pts[i], sc.Name) / float64(len(cfg.Scenarios))
				}
				mean.X, mean.Y = append(mean.X, xs[i]), append(mean.Y, v)
			}
			pad := math.Max(0.005, 0.1*(hi-lo))
			p := &report.LinePlot{Title: fmt.Sprintf("%s: %s vs %s (others at the chosen setting)", cfg.Sweep.Policy, m.label, param.Key),
				XLabel: param.Key, YLabel: m.label, YMin: math.Max(0, lo-pad), YMax: math.Min(1, hi+pad), Series: append([]report.Series{mean}, series...)}
			if err := p.Write(filepath.Join(dir, "sweep-"+clean.Replace(param.Key)+"-"+m.name+".png"), 760, 460); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseFloat(s string) (float64, error) {
	var f float64
	_, err := fmt.Sscan(s, &f)
	return f, err
}
