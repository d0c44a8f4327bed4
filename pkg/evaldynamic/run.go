package evaldynamic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/sim"
)

// Options control a run beyond the configuration.
type Options struct {
	OutDir  string
	Workers int
	// Now stamps the outputs; pass time.Now in production and a fixed clock in tests.
	Now func() time.Time
	// Progress is called once per finished (scenario, policy, seed) run with the total.
	Progress func(done, total int)
	// Provenance carries the rated build and the asset home; Run adds the retriever and encoder
	// it ran with and writes the record into table2.json and config.yaml.
	Provenance provenance.Record
	// DecisionLog, when set, is a directory that receives every run's decisions and outcomes
	// in the decision-log format of rated serve (docs/DECISION-LOG.md).
	DecisionLog string
}

// Result is what a run produced.
type Result struct {
	Rows   []sim.Row
	World  WorldInfo
	Table  *report.Table
	Paired []PairedRow
	// Bounds is the fallback oracle's bound on every other policy (nil without oracle_fallback rows).
	Bounds []BoundRow
	// Goals is cfg.Goals checked (nil when the run lacks goals.policy).
	Goals []GoalRow
}

// table2JSON is the layout of table2.json.
type table2JSON struct {
	Rows        []sim.Row `json:"rows"`
	Config      *Config   `json:"config"`
	World       WorldInfo `json:"world"`
	GeneratedAt string    `json:"generated_at"`
	GoVersion   string    `json:"go_version"`
	Notes       []string  `json:"notes"`
	// Provenance is the rated build, asset home, retriever and encoder digests of the run.
	Provenance provenance.Record `json:"provenance"`
}

// Run prepares the world, runs the grid and writes table2.{md,csv,json,tex}, config.yaml,
// runs.jsonl and one rolling-SR plot per scenario into opts.OutDir, with paired.* when
// dynamic.compare names policies, bounds.* when the policies include fallback oracles and
// goals.* when goals.policy is among them.
func Run(ctx context.Context, cfg *Config, res Resources, opts Options) (*Result, error) {
	if err := cfg.CheckFileNames(opts.DecisionLog != ""); err != nil {
		return nil, err
	}
	w, info, err := BuildWorld(res, cfg)
	if err != nil {
		return nil, err
	}
	grid := sim.GridSpec{
		Scenarios: cfg.Scenarios, Protocols: cfg.Protocols, Policies: cfg.Policies, Seeds: cfg.Dynamic.Seeds,
		Steps: cfg.Dynamic.Steps, K: cfg.Retrieval.K, Weights: cfg.Fusion,
		Summary: cfg.Summary(), ASWindow: cfg.Dynamic.ASWindow, CurveStride: cfg.Dynamic.CurveStride,
	}
	if opts.DecisionLog != "" {
		grid.Loggers = decisionLoggers(opts.DecisionLog, res.Bench, info.Retriever)
	}
	total := len(grid.Protocols) * len(grid.Scenarios) * len(grid.Policies) * len(grid.Seeds)
	done := 0
	progress := func() {
		done++ // called under RunGrid's lock
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	results, err := sim.RunGrid(ctx, w, grid, workers, progress)
	if err != nil {
		return nil, err
	}
	rows := sim.Summarize(grid, results)
	table := Table2(cfg, rows, info)
	paired, err := Paired(cfg, results)
	if err != nil {
		return nil, err
	}
	bounds := FallbackBounds(cfg, rows)
	goals, err := Goals(cfg, rows, results)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	prov := opts.Provenance
	prov.Retriever, prov.Encoder = res.Retriever.Name(), provenance.EncoderOf(res.Retriever)
	out := table2JSON{Rows: rows, Config: cfg, World: info, GeneratedAt: now().UTC().Format(time.RFC3339),
		GoVersion: runtime.Version(), Notes: table.Notes, Provenance: prov}
	if err := report.WriteFiles(opts.OutDir, "table2", table, out); err != nil {
		return nil, err
	}
	cfgYAML, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	header, err := provenance.YAMLComment(prov)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(opts.OutDir, "config.yaml"), append(header, cfgYAML...)); err != nil {
		return nil, err
	}
	if err := writeRuns(filepath.Join(opts.OutDir, "runs.jsonl"), results); err != nil {
		return nil, err
	}
	if err := writePlots(opts.OutDir, cfg, rows); err != nil {
		return nil, err
	}
	if len(paired) > 0 {
		if err := report.WriteFiles(opts.OutDir, "paired", PairedTable(paired), paired); err != nil {
			return nil, err
		}
	}
	if len(bounds) > 0 {
		if err := report.WriteFiles(opts.OutDir, "bounds", BoundTable(bounds), bounds); err != nil {
			return nil, err
		}
	}
	if len(goals) > 0 {
		if err := report.WriteFiles(opts.OutDir, "goals", GoalsTable(goals, cfg.Goals.Policy), goals); err != nil {
			return nil, err
		}
	}
	return &Result{Rows: rows, World: info, Table: table, Paired: paired, Bounds: bounds, Goals: goals}, nil
}

// Table2 lays the rows out like the paper's Table 2: one row per method (per protocol when
// there are several), SR / FSR / AS / pre-failure SR per scenario, each as mean ± 95% CI over
// seeds, then attempts per step and SR per attempt averaged over the scenarios. Oracle rows are
// labelled as upper bounds.
func Table2(cfg *Config, rows []sim.Row, info WorldInfo) *report.Table {
	t := &report.Table{Title: fmt.Sprintf("Table 2 — dynamic failure injection (%s, %d tools, %d %s queries, %s, context %s)",
		info.Bench, info.Tools, info.Queries, info.Split, info.Retriever, info.Context)}
	multi := len(cfg.Protocols) > 1
	if multi {
		t.Columns = append(t.Columns, "Feedback")
		t.KeyColumns = 2
	}
	t.Columns = append(t.Columns, "Method")
	for _, sc := range cfg.Scenarios {
		t.Columns = append(t.Columns, sc.Name+" SR", sc.Name+" FSR", sc.Name+" AS", sc.Name+" pre-fail SR")
	}
	t.Columns = append(t.Columns, "attempts/step", "SR/attempt")
	byKey := indexRows(rows)
	for _, proto := range cfg.Protocols {
		for _, p := range cfg.Policies {
			var line []string
			if multi {
				line = append(line, proto.Name)
			}
			line = append(line, p.Name+oracleLabel(p, proto.Kind))
			attempts, perAttempt := 0.0, 0.0
			for _, sc := range cfg.Scenarios {
				r := byKey[rowKey(proto.Name, sc.Name, p.Name)]
				line = append(line, report.PercentCI(r.PostFailSR.Mean, r.PostFailSR.CI95), report.PercentCI(r.FSR.Mean, r.FSR.CI95),
					formatAS(r), report.Percent(r.PreFailSR.Mean))
				attempts += r.AttemptsPerStep.Mean / float64(len(cfg.Scenarios))
				perAttempt += r.SRPerAttempt.Mean / float64(len(cfg.Scenarios))
			}
			line = append(line, fmt.Sprintf("%.2f", attempts), report.Percent(perAttempt))
			t.Rows = append(t.Rows, line)
		}
	}
	d := cfg.Dynamic
	t.Notes = []string{
		fmt.Sprintf("SR = Post-Fail success rate (the tool that executed is relevant) and FSR = share of executions that hit an unavailable tool, both over steps %d–%d (1-based); mean ± 95%% CI over %d seeds.", d.SummaryFrom+1, d.SummaryTo, len(d.Seeds)),
		fmt.Sprintf("AS = steps after the first fully post-onset window (%d steps wide) until the rolling SR reaches θ × the pre-failure peak; \"Failed\" when a run never does before step %d; \"(n failed)\" counts such runs.", d.ASWindow, d.Steps),
		fmt.Sprintf("Failure onset at %s; %s Top-K = %d; hit@%d of the retriever on these queries = %.1f%% (the ceiling for SR).", cfg.Onsets(), selectionNote(cfg.Scenarios), cfg.Retrieval.K, cfg.Retrieval.K, 100*info.RecallAtK),
		fmt.Sprintf("Static prior: consistency by %s; mean r_static %.3f; %d tools have r_static ≥ 0.8. Providers (endpoint hosts, n8n nodes): %d; %d tools share one.", info.PriorMethod, info.MeanPrior, info.HighPrior, info.Providers, info.SharedProviders),
		"Feedback protocols: execution = the tool ran or failed (the paper's y_t); task = ran and served the query; judged = task success through a judge with the stated false-positive/false-negative rates. Every policy also sees execution failures, which a runtime always observes. A fallback (attempts > 1) tries the next choice after a failed execution.",
		"Oracle rows see the failure schedule. [upper bound]: the task oracle (the best-ranked candidate that will execute and serve the query), which no single-attempt policy beats; and under execution feedback the availability oracle (the best-ranked candidate that will execute), which bounds every policy that keeps the retriever's order among the tools that execute, though a policy that favours tools it has run before can pass it when the queries concentrate on few tools (docs/RESULTS.md, \"The bound\"). [bound]: the fallback oracle that knows which candidates are relevant, which plans each step's attempts knowing every tool's success probability at a price λ per attempt; its rows over λ trace the SR-per-attempt frontier (bounds.md). [reference]: oracles that bound no policy and are measured beside them: the expected oracle (each tool's current success probability, not the flaky coins), the detect oracles (one failed call to detect each outage, recoveries seen for free), the fallback oracle planning with the calibrated relevance, and under task or judged feedback the availability oracle (a policy that learns relevance passes it).",
	}
	if late := cfg.PreFailureInSummary(); len(late) > 0 {
		names := make([]string, len(late))
		for i, sc := range late {
			names[i] = fmt.Sprintf("%s (onset %d)", sc.Name, sc.Onset())
		}
		t.Notes = append(t.Notes, fmt.Sprintf("The summary window starts before the failure onset of %s: their SR and FSR include pre-failure steps.", strings.Join(names, ", ")))
	}
	if info.Calibration != "" {
		t.Notes = append(t.Notes, "Calibration: "+info.Calibration+".")
	}
	return t
}

// rowKey identifies a summary row by its protocol, scenario and policy.
func rowKey(protocol, scenario, policy string) string {
	return protocol + "\x00" + scenario + "\x00" + policy
}

// indexRows maps rowKey to each row.
func indexRows(rows []sim.Row) map[string]sim.Row {
	byKey := make(map[string]sim.Row, len(rows))
	for _, r := range rows {
		byKey[rowKey(r.Protocol, r.Scenario, r.Method)] = r
	}
	return byKey
}

func formatAS(r sim.Row) string {
	switch {
	case r.AS.FailedRuns == r.Seeds:
		return "Failed"
	case r.AS.FailedRuns > 0:
		return fmt.Sprintf("%.0f (%d failed)", r.AS.Mean, r.AS.FailedRuns)
	default:
		return fmt.Sprintf("%.0f ± %.0f", r.AS.Mean, r.AS.CI95)
	}
}

func writeRuns(path string, results []sim.RunResult) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		for _, r := range results {
			line := struct {
				Protocol        string  `json:"protocol"`
				Scenario        string  `json:"scenario"`
				Policy          string  `json:"policy"`
				Seed            uint64  `json:"seed"`
				PostFailSR      float64 `json:"post_fail_sr"`
				FSR             float64 `json:"fsr"`
				PreFailSR       float64 `json:"pre_fail_sr"`
				AttemptsPerStep float64 `json:"attempts_per_step"`
				SRPerAttempt    float64 `json:"sr_per_attempt"`
				AS              any     `json:"as"`
			}{r.Protocol, r.Scenario, r.Policy, r.Seed, r.PostFailSR, r.FSR, r.PreFailSR, r.AttemptsPerStep, r.SRPerAttempt, r.AS}
			if err := enc.Encode(line); err != nil {
				return err
			}
		}
		return nil
	})
}

func writePlots(dir string, cfg *Config, rows []sim.Row) error {
	for _, proto := range cfg.Protocols {
		for _, sc := range cfg.Scenarios {
			title, name := sc.Name, cfg.plotFile(proto.Name, sc.Name)
			if len(cfg.Protocols) > 1 {
				title = sc.Name + ", " + proto.Name + " feedback"
			}
			p := &report.LinePlot{
				Title:  fmt.Sprintf("Rolling SR (window %d) — %s", cfg.Dynamic.ASWindow, title),
				XLabel: "step", YLabel: "success rate", YMin: 0, YMax: 1,
				MarkerX: float64(sc.Onset()), MarkerLabel: "failure onset",
			}
			for _, r := range rows {
				if r.Scenario != sc.Name || r.Protocol != proto.Name {
					continue
				}
				s := report.Series{Label: r.Method}
				for i, y := range r.Curve {
					s.X = append(s.X, float64(i*cfg.Dynamic.CurveStride))
					s.Y = append(s.Y, y)
				}
				p.Series = append(p.Series, s)
			}
			if err := p.Write(filepath.Join(dir, name), 900, 520); err != nil {
				return err
			}
		}
	}
	return nil
}

// oracleLabel marks an oracle's row by what it is under protocol kind proto: " [upper bound]"
// for the task oracle, and for the availability oracle under execution feedback; " [bound]" for
// the fallback oracle that knows relevance; " [reference]" for the other oracles, which single
// policies can pass (the expected oracle in flaky, the availability oracle once task outcomes
// teach relevance); "" for a policy.
func oracleLabel(p bandit.Spec, proto string) string {
	switch {
	case p.Kind == "oracle_task", p.Kind == "oracle_availability" && proto == sim.ProtocolExecution:
		return " [upper bound]"
	case p.Kind == "oracle_fallback" && p.KnowsRelevance:
		return " [bound]"
	case bandit.IsOracle(p.Kind):
		return " [reference]"
	}
	return ""
}

// selectionNote says how the scenarios pick the tools their events take down (or bring in), from
// their selectors (the paper's rule: the next ρ·N after skipping the 10% most frequently
// relevant), one clause per way of selecting with the scenarios that use it.
func selectionNote(scenarios []sim.Scenario) string {
	describe := func(sel sim.Selector) string {
		of := "the catalog"
		if sel.Among == sim.AmongRelevant {
			of = "the tools the stream needs"
		}
		what := fmt.Sprintf("%.0f%% of %s", 100*sel.Fraction, of)
		if sel.Unit == sim.UnitProvider {
			what = fmt.Sprintf("whole providers covering %.0f%% of %s", 100*sel.Fraction, of)
		}
		order := "most frequently relevant in the stream first"
		if sel.By == "random" {
			order = "in a seeded random order"
		}
		if sel.SkipTop > 0 {
			return fmt.Sprintf("%s, %s, after skipping the top %.0f%%", what, order, 100*sel.SkipTop)
		}
		return fmt.Sprintf("%s, %s", what, order)
	}
	// Events that select alike share one clause, in first-seen order, naming their scenarios
	// (the tools that appear, new_tools, marked as such).
	var order []string
	by := map[string][]string{}
	for _, sc := range scenarios {
		for _, e := range sc.Events {
			c, name := describe(e.Select), sc.Name
			if e.Kind == sim.EventNewTools {
				name += " (the tools that appear)"
			}
			if _, ok := by[c]; !ok {
				order = append(order, c)
			}
			if !slices.Contains(by[c], name) {
				by[c] = append(by[c], name)
			}
		}
	}
	clauses := make([]string, len(order))
	for i, c := range order {
		clauses[i] = c + ": " + strings.Join(by[c], ", ")
	}
	return "the events select " + strings.Join(clauses, "; ") + "."
}
