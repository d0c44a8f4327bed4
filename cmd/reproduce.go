package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/rated-dev/rated/data"
	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/evaldynamic"
	"github.com/rated-dev/rated/pkg/evallatency"
	"github.com/rated-dev/rated/pkg/evaloffline"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/report"
	"github.com/rated-dev/rated/pkg/reproduce"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// newReproduceCmd builds `rated reproduce`: Tables 1-3 on the embedded default benchmark,
// compared cell by cell with pkg/reproduce/expected/default.json.
func newReproduceCmd() *cobra.Command {
	var (
		outDir, expectedPath, update string
		benchName, releaseDir        string
		tables                       []int
		latencyQueries               int
		sizes                        []int
		enc                          encodingFlags
	)
	cmd := &cobra.Command{
		Use:   "reproduce [--out DIR]",
		Short: "Regenerate Tables 1-3 on the embedded default benchmark (or 1-2 on the EcoAgent release) and compare every cell with the expected values",
		Long: `Regenerates Table 1 (rated eval offline: the retrievers listed in the expected file), Table 2
(rated eval dynamic with the embedded configs/paper.yaml) and Table 3 (rated eval latency) on the
embedded default benchmark, writing each under OUT/table{1,2,3}/, then compares every expected
cell of pkg/reproduce/expected/default.json (or --expected FILE) with the regenerated one and
prints [OK] or the difference per cell. Latency cells (Table 3) depend on the machine: they are
printed as [INFO] and never fail the run. Exits non-zero when a cell differs beyond the table's
tolerance or is missing.

--bench ecoagent does the same, without any LLM, on the shipped EcoAgent release (data/ecoagent,
embedded; --release DIR for another copy): Table 1 on its Syn and Real test splits (tables
table1-syn and table1-real), Table 2 on Real test (Syn test while the release has no Real) with
all-MiniLM-L6-v2 as the encoder, compared with pkg/reproduce/expected/ecoagent.json.

--update FILE writes the regenerated values as a new expected file instead of comparing.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := cmd.ErrOrStderr()
			rb, err := loadReproBench(benchName, releaseDir)
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("tables") {
				tables = rb.tables
			}
			if err := checkReproduceFlags(rb, benchName, tables, latencyQueries, sizes); err != nil {
				return fmt.Errorf("reproduce: %w", err)
			}
			exp, err := rb.expected()
			if expectedPath != "" {
				exp, err = reproduce.ReadExpected(expectedPath)
			}
			if err != nil && update != "" && errors.Is(err, fs.ErrNotExist) {
				// The first --update of a benchmark: nothing to compare with yet.
				exp, err = &reproduce.Expected{Tables: map[string]reproduce.ExpectedTable{}}, nil
			}
			if err != nil {
				return fmt.Errorf("reproduce: %w", err)
			}
			if update != "" {
				if err := refuseInside(outDir, "update", update); err != nil {
					return fmt.Errorf("reproduce: %w", err)
				}
			}
			set, err := outdir.Begin(outDir, reproduceOutput())
			if err != nil {
				return fmt.Errorf("reproduce: %w", err)
			}
			defer set.Abort()
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			// One open per model folder for all three tables.
			src, models, err := enc.sharedEncoders(h)
			if err != nil {
				return fmt.Errorf("reproduce: %w", err)
			}
			defer models.Close()
			produced := map[string]*report.Table{}
			want := func(n int) bool { return slices.Contains(tables, n) }
			if want(1) {
				retrieversOf := func(table string) []string {
					if r := exp.Tables[table].Retrievers; len(r) > 0 {
						return r
					}
					return rb.retrievers
				}
				// Every Table 1's retriever names first, before the first table runs.
				for _, t1 := range rb.table1 {
					retrievers := retrieversOf(t1.table)
					reg, err := offlineRegistry(nil, h)
					if err != nil {
						return err
					}
					env := evaloffline.Env{Ctx: cmd.Context(), Bench: t1.bench, Encoders: src}
					for _, name := range retrievers {
						if err := reg.Check(name, env); err != nil {
							return fmt.Errorf("reproduce %s: %w", t1.table, err)
						}
					}
				}
				for _, t1 := range rb.table1 {
					reg, err := offlineRegistry(nil, h)
					if err != nil {
						return err
					}
					cfg := evaloffline.DefaultConfig()
					cfg.Retrievers = retrieversOf(t1.table)
					env := evaloffline.Env{Ctx: cmd.Context(), Bench: t1.bench, Log: log, Encoders: src}
					res, err := evaloffline.Run(env, t1.label, reg, cfg)
					if err != nil {
						return fmt.Errorf("reproduce %s: %w", t1.table, err)
					}
					res.Provenance = runRecord(h)
					if err := evaloffline.WriteOutputs(filepath.Join(set.Dir(), t1.table), res); err != nil {
						return err
					}
					produced[t1.table] = evaloffline.Table(res)
				}
			}
			if want(2) {
				t, err := reproduceTable2(cmd.Context(), filepath.Join(set.Dir(), "table2"), h, src, rb.table2, rb.table2Label, rb.table2Config, cmd)
				if err != nil {
					return fmt.Errorf("reproduce table 2: %w", err)
				}
				produced["table2"] = t
			}
			if want(3) {
				t, err := reproduceTable3(cmd.Context(), filepath.Join(set.Dir(), "table3"), h, src, latencyQueries, sizes, cmd)
				if err != nil {
					return fmt.Errorf("reproduce table 3: %w", err)
				}
				produced["table3"] = t
			}
			if update != "" {
				// Snapshot before the outputs are committed: a table that cannot be snapshot (two
				// rows of one name) leaves neither the outputs nor the expected file.
				next, kept, err := nextExpected(exp, produced, benchName, rb.retrievers)
				if err != nil {
					return fmt.Errorf("reproduce --update: %w", err)
				}
				if err := set.Commit(); err != nil {
					return fmt.Errorf("reproduce: %w", err)
				}
				if err := next.Write(update); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "reproduce: wrote the expected values of %d tables to %s (%d regenerated, %d kept)\n", len(next.Tables), update, len(produced), len(kept))
				return nil
			}
			if err := set.Commit(); err != nil {
				return fmt.Errorf("reproduce: %w", err)
			}
			var lines []reproduce.Line
			selected := rb.tableNames(tables)
			for _, name := range selected {
				e, ok := exp.Tables[name]
				if !ok {
					fmt.Fprintf(cmd.OutOrStdout(), "[INFO] %s: no expected values (run rated reproduce --update FILE)\n", name)
					continue
				}
				lines = append(lines, reproduce.Compare(name, e, produced[name])...)
			}
			for _, name := range slices.Sorted(maps.Keys(exp.Tables)) {
				switch {
				case slices.Contains(selected, name):
				case slices.Contains(tables, tableNumber(name)):
					// Expected, asked for, and not produced by this benchmark (table1-real of a
					// release without Real): every cell is missing.
					lines = append(lines, reproduce.Compare(name, exp.Tables[name], nil)...)
				default:
					fmt.Fprintf(cmd.OutOrStdout(), "[INFO] %s: not regenerated (--tables %s), its expected cells are not checked\n", name, joinInts(tables))
				}
			}
			if !reproduce.Summarize(cmd.OutOrStdout(), lines) {
				return fmt.Errorf("reproduce: some cells differ from the expected values")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&outDir, "out", "runs/reproduce", "output directory (one sub-directory per table)")
	f.StringVar(&expectedPath, "expected", "", "expected-values file (default: the embedded pkg/reproduce/expected/default.json)")
	f.StringVar(&benchName, "bench", "default", "benchmark: default (the embedded hand-written one) or ecoagent (the shipped EcoAgent release, data/ecoagent: Table 1 on its Syn and Real test splits, Table 2 on Real test)")
	f.StringVar(&releaseDir, "release", "", "with --bench ecoagent: read the release from this folder (a build-bench --out or a copy of data/ecoagent) instead of the embedded one")
	f.StringVar(&update, "update", "", "write the regenerated values to this expected-values file instead of comparing")
	f.IntSliceVar(&tables, "tables", []int{1, 2, 3}, "tables to regenerate (--bench ecoagent: 1,2)")
	f.IntVar(&latencyQueries, "latency-queries", 1000, "measured queries of Table 3")
	enc.register(f)
	f.IntSliceVar(&sizes, "sizes", []int{5000, 100000}, "catalog sizes of Table 3's search sweep")
	return cmd
}

// nextExpected is the expected file --update writes: exp with every produced table snapshot
// (tolerances: Table 1 0.001, Table 2 0.1 points, Table 3 informational); kept names the tables
// that keep their earlier values.
func nextExpected(exp *reproduce.Expected, produced map[string]*report.Table, benchName string, retrievers []string) (*reproduce.Expected, []string, error) {
	next := &reproduce.Expected{About: fmt.Sprintf("rated reproduce --bench %s --update on %s/%s, %s, %d CPUs", benchName, runtime.GOOS, runtime.GOARCH, runtime.Version(), runtime.NumCPU()), Tables: maps.Clone(exp.Tables)}
	var kept []string
	for _, name := range slices.Sorted(maps.Keys(exp.Tables)) {
		if produced[name] == nil {
			kept = append(kept, name)
		}
	}
	if len(kept) > 0 {
		next.About += fmt.Sprintf("; %s kept from the earlier expected values", strings.Join(kept, ", "))
	}
	for _, name := range slices.Sorted(maps.Keys(produced)) {
		tol, info := 0.001, false
		switch name {
		case "table2":
			tol = 0.1
		case "table3":
			tol, info = 0, true
		}
		e, err := reproduce.Snapshot(produced[name], tol, info)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if strings.HasPrefix(name, "table1") {
			e.Retrievers = exp.Tables[name].Retrievers
			if len(e.Retrievers) == 0 {
				e.Retrievers = retrievers
			}
		}
		next.Tables[name] = e
	}
	return next, kept, nil
}

// tableNumber is the table number of an expected-table name: 1 for table1, table1-syn and
// table1-real.
func tableNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "table")[:1])
	return n
}

// joinInts prints table numbers as a flag value ("1,2").
func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// checkReproduceFlags refuses table numbers and Table 3 settings that cannot run, before any
// work starts.
func checkReproduceFlags(rb reproBench, benchName string, tables []int, latencyQueries int, sizes []int) error {
	if len(tables) == 0 {
		return errors.New("--tables: no table given: want 1, 2 or 3")
	}
	for i, n := range tables {
		if n < 1 || n > 3 {
			return fmt.Errorf("--tables %d: want 1, 2 or 3", n)
		}
		if slices.Contains(tables[:i], n) { // each of its cells would be counted twice
			return fmt.Errorf("--tables %d: listed twice", n)
		}
	}
	if slices.Contains(tables, 3) && !slices.Contains(rb.tables, 3) {
		return fmt.Errorf("--bench %s has no Table 3 (latency is measured on the default benchmark)", benchName)
	}
	if latencyQueries < 1 {
		return fmt.Errorf("--latency-queries %d: must be at least 1", latencyQueries)
	}
	return evallatency.ValidateSweep(sizes, 0, 1)
}

// reproduceTable2 runs the dynamic experiment with the embedded configs/paper.yaml on b, changed
// by adjust when it is not nil.
func reproduceTable2(ctx context.Context, out string, h home.Home, src retrieve.EncoderSource, b *bench.Bench, label string, adjust func(*evaldynamic.Config), cmd *cobra.Command) (*report.Table, error) {
	cfg, err := evaldynamic.LoadConfig(viper.New(), nil)
	if err != nil {
		return nil, err
	}
	if adjust != nil {
		adjust(cfg)
	}
	log := cmd.ErrOrStderr()
	res, closeRes, err := evaldynamic.ResolveResources(ctx, b, label, cfg, src, log, newProgress(log, "encode catalog"))
	if err != nil {
		return nil, err
	}
	defer closeRes()
	r, err := evaldynamic.Run(ctx, cfg, res, evaldynamic.Options{OutDir: out, Now: time.Now, Progress: newProgress(log, "eval dynamic"), Provenance: runRecord(h)})
	if err != nil {
		return nil, err
	}
	return r.Table, nil
}

// reproduceTable3 runs the latency measurement with the paper's four policies.
func reproduceTable3(ctx context.Context, out string, h home.Home, src retrieve.EncoderSource, queries int, sizes []int, cmd *cobra.Command) (*report.Table, error) {
	cfg, err := evaldynamic.LoadConfig(viper.New(), nil)
	if err != nil {
		return nil, err
	}
	var specs []bandit.Spec
	for _, s := range cfg.Policies {
		if slices.Contains([]string{"RATED (Full)", "RATED (w/o Feedback)", "RATED (w/ Global MAB)", "ToolRL-like Batch GRPO"}, s.Name) {
			specs = append(specs, s)
		}
	}
	b, err := defaultbench.Load()
	if err != nil {
		return nil, err
	}
	var texts []string
	for _, q := range b.SplitQueries("test") {
		texts = append(texts, q.Text)
	}
	priors := make([]float64, len(b.Corpus))
	for i := range priors {
		priors[i] = 0.5
	}
	log := cmd.ErrOrStderr()
	lf, err := openLatencyFrontend(ctx, src, cfg.Retrieval.Retriever, cfg.Retrieval.Encoder, b.Corpus, cfg.Retrieval.ContextDim, nil)
	if err != nil {
		return nil, err
	}
	defer lf.close()
	res, err := evallatency.MeasurePipeline(ctx, lf.front, texts, priors, evallatency.Config{Queries: queries, Warmup: 100, K: cfg.Retrieval.K,
		Policies: specs, Weights: cfg.Fusion, FailureRate: 0.2, Seed: 1, Now: time.Now}, log)
	if err != nil {
		return nil, err
	}
	rep := &evallatency.Report{Pipeline: res, Host: evallatency.HostInfo{Device: "CPU", GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU(), GoVersion: runtime.Version()},
		Provenance: lf.record(h)}
	if len(sizes) > 0 {
		if rep.Search, err = evallatency.MeasureSearch(ctx, evallatency.SearchConfig{Sizes: sizes, Dim: lf.dim, K: cfg.Retrieval.K,
			Warmup: 100, Queries: 1000, Batch: 64, Rescore: 100, Seed: 1, Now: time.Now}, log); err != nil {
			return nil, err
		}
	}
	if err := evallatency.WriteOutputs(out, rep); err != nil {
		return nil, err
	}
	return evallatency.PipelineTable(rep), nil
}

// reproBench is what `rated reproduce --bench` regenerates: the Table 1 runs (one table per
// benchmark part), the benchmark and settings of Table 2, and the expected values.
type reproBench struct {
	table1 []reproTable1
	// table2 is the benchmark of Table 2; table2Config adjusts the paper's configuration.
	table2       *bench.Bench
	table2Label  string
	table2Config func(*evaldynamic.Config)
	tables       []int
	// retrievers are Table 1's rows when the expected values do not list them.
	retrievers []string
	expected   func() (*reproduce.Expected, error)
}

// reproTable1 is one Table 1 run: the test split of bench, compared as expected table `table`.
type reproTable1 struct {
	table, label string
	bench        *bench.Bench
}

// tableNames lists the expected-table names of the selected table numbers.
func (rb reproBench) tableNames(tables []int) []string {
	var out []string
	for _, n := range tables {
		if n == 1 {
			for _, t := range rb.table1 {
				out = append(out, t.table)
			}
			continue
		}
		out = append(out, fmt.Sprintf("table%d", n))
	}
	return out
}

// loadReproBench resolves --bench (and --release for ecoagent).
func loadReproBench(name, releaseDir string) (reproBench, error) {
	switch name {
	case "default":
		if releaseDir != "" {
			return reproBench{}, fmt.Errorf("reproduce: --release goes with --bench ecoagent")
		}
		b, err := defaultbench.Load()
		if err != nil {
			return reproBench{}, err
		}
		return reproBench{
			table1: []reproTable1{{table: "table1", label: "embedded default", bench: b}},
			table2: b, table2Label: "embedded default", tables: []int{1, 2, 3}, expected: reproduce.DefaultExpected,
			retrievers: []string{"tfidf", "bm25"},
		}, nil
	case "ecoagent":
		var fsys fs.FS = data.EcoAgent
		label := data.EcoAgentName
		if releaseDir != "" {
			fsys, label = os.DirFS(releaseDir), releaseDir
		} else {
			sub, err := fs.Sub(data.EcoAgent, "ecoagent")
			if err != nil {
				return reproBench{}, err
			}
			fsys = sub
		}
		syn, err := readSub(fsys, "syn", label)
		if err != nil {
			return reproBench{}, err
		}
		rb := reproBench{
			table1: []reproTable1{{table: "table1-syn", label: label + "/syn", bench: syn}},
			table2: syn, table2Label: label + "/syn", tables: []int{1, 2},
			// One dense row, the smallest installed encoder (all-MiniLM-L6-v2, 22M parameters):
			// with 4,002 tools to encode on a fresh machine a second encoder doubles the time.
			retrievers: []string{"tfidf", "bm25", "dense:all-minilm-l6-v2"},
			table2Config: func(c *evaldynamic.Config) {
				// The smallest installed encoder, which the release's Table 1 also reports, so the
				// check stays short on two cores (docs/BUILD-BENCH.md, "EcoAgent release").
				c.Retrieval.Encoder = "all-minilm-l6-v2"
			},
			expected: reproduce.EcoAgentExpected,
		}
		// A release of Syn alone (Real still being built) has Table 2 on Syn test.
		if _, err := fs.Stat(fsys, "real"); err == nil {
			real, err := readSub(fsys, "real", label)
			if err != nil {
				return reproBench{}, err
			}
			rb.table1 = append(rb.table1, reproTable1{table: "table1-real", label: label + "/real", bench: real})
			rb.table2, rb.table2Label = real, label+"/real"
		}
		return rb, nil
	}
	return reproBench{}, fmt.Errorf("reproduce: --bench %q: want default or ecoagent", name)
}

func readSub(fsys fs.FS, dir, label string) (*bench.Bench, error) {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, err
	}
	b, err := bench.Read(sub)
	if err != nil {
		return nil, fmt.Errorf("benchmark %s/%s: %w", label, dir, err)
	}
	return b, nil
}
