package cmd

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/evaldynamic"
	"github.com/rated-dev/rated/pkg/evallatency"
	"github.com/rated-dev/rated/pkg/home"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// newEvalLatencyCmd builds `rated eval latency`: Table 3 (pkg/evallatency).
func newEvalLatencyCmd() *cobra.Command {
	var (
		benchDir, outDir, encoder, device, split, retriever string
		policies                                            []string
		sizes                                               []int
		queries, warmup, k, sweepQ, dim                     int
		enc                                                 encodingFlags
		sweepBatch, rescore, annMax, ivfMax, components     int
		ann                                                 = retrieve.DefaultHNSWParams()
		ivf                                                 = retrieve.DefaultIVFParams()
		ivfProbes                                           []int
		sweepVectors                                        string
		failure                                             float64
		seed                                                uint64
		noSweep                                             bool
	)
	cmd := &cobra.Command{
		Use:   "latency [--bench DIR] --out OUT",
		Short: "Table 3: per-query latency of encoding alone and encoding + each policy (mean, P95)",
		Long: `Measures, one query at a time after a warm-up, the first stage alone (query embedding with the
encoder and exact top-K search; BM25 and a hashed bag of words with --retriever bm25) and the
first stage followed by each policy (RATED Full, w/o Feedback, w/ Global MAB, ToolRL-like batch
GRPO, as configured in the embedded configs/paper.yaml), as mean and 95th percentile. Then times
top-K search alone over synthetic catalogs of --sizes tools: exact (one query at a time, blocked
batches, int8), coder/hnsw up to --ann-max tools and the inverted file (retrieve.IVF, one row per
--ivf-probes) up to --ivf-max, with recall@k against exact search. The catalogs are drawn from a
Gaussian mixture fitted to the encoder's embeddings of the benchmark's corpus (--sweep-vectors;
fit a larger corpus for a closer fit), or are isotropic unit vectors. 1,000,000 × 384 float32
vectors need about 4 GB of memory while the indexes are built; built indexes are kept under
<home>/cache/index.

The encoder is --encoder (an installed model folder name, a folder path, or openai:URL[#MODEL];
default the first installed in the asset home); a missing one is an error naming the home and
"rated setup models". Writes OUT/table3.{md,csv,json,tex} and OUT/table3_search.{md,csv,tex};
table3.json records rated's version and commit and the encoder's file digests.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if outDir == "" {
				return fmt.Errorf("eval latency: --out is required")
			}
			if !slices.Contains([]string{"auto", "fitted", "isotropic"}, sweepVectors) {
				return fmt.Errorf("eval latency: --sweep-vectors %q: want auto, fitted or isotropic", sweepVectors)
			}
			log := cmd.ErrOrStderr()
			cfg, err := evaldynamic.LoadConfig(viper.New(), nil)
			if err != nil {
				return err
			}
			var specs []bandit.Spec
			for _, name := range policies {
				i := slices.IndexFunc(cfg.Policies, func(s bandit.Spec) bool { return s.Name == name })
				if i < 0 {
					var have []string
					for _, s := range cfg.Policies {
						have = append(have, s.Name)
					}
					return fmt.Errorf("eval latency: --policies: %q is not a policy of configs/paper.yaml (%s)", name, strings.Join(have, "; "))
				}
				specs = append(specs, cfg.Policies[i])
			}
			if k == 0 {
				k = cfg.Retrieval.K
			}
			lcfg := evallatency.Config{Queries: queries, Warmup: warmup, K: k, Policies: specs, Weights: cfg.Fusion,
				FailureRate: failure, Seed: seed, Now: time.Now}
			if err := lcfg.Validate(); err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			if !noSweep {
				if err := evallatency.ValidateSweep(sizes, dim, sweepQ); err != nil {
					return fmt.Errorf("eval latency: %w", err)
				}
				// The sweep's own settings, before Table 3 is measured and the vectors fitted.
				if err := checkSweepFlags(ann, annMax, ivf, ivfProbes, ivfMax, rescore, components, sweepBatch); err != nil {
					return fmt.Errorf("eval latency: %w", err)
				}
			}
			if err := refuseInputsInside(outDir, benchDir, ""); err != nil {
				return err
			}
			set, err := outdir.Begin(outDir, evalLatencyOutput())
			if err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			defer set.Abort()
			b, name, err := loadBench(benchDir)
			if err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			var texts []string
			for _, q := range b.SplitQueries(split) {
				texts = append(texts, q.Text)
			}
			if _, ok := b.Splits[split]; !ok && cmd.Flags().Changed("split") {
				return fmt.Errorf("eval latency: --split %q: %s has no such split (have %s)", split, name, strings.Join(slices.Sorted(maps.Keys(b.Splits)), ", "))
			}
			if len(texts) == 0 {
				for _, q := range b.Queries {
					texts = append(texts, q.Text)
				}
			}
			priors := make([]float64, len(b.Corpus))
			byID := map[string]float64{}
			for _, t := range b.Tools {
				if t.Prior != nil {
					byID[t.ID] = t.Prior.Value
				}
			}
			for i, d := range b.Corpus {
				p, ok := byID[d.ID]
				if !ok {
					p = 0.5
				}
				priors[i] = p
			}
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			opts, err := enc.apply(encode.Options{Device: device, CacheDir: h.EmbeddingCache()})
			if err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			lf, err := openLatencyFrontend(cmd.Context(), encoderSource(h, opts), retriever, encoder, b.Corpus, cfg.Retrieval.ContextDim, newProgress(log, "encode catalog"))
			if err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			defer lf.close()
			front := lf.front
			hostDevice := "CPU"
			if device == encode.DeviceCUDA && lf.dense {
				hostDevice = "CUDA"
			}
			if dim == 0 {
				dim = lf.dim
			}
			fmt.Fprintf(log, "eval latency: %s on %s (%d tools), %d queries after %d warm-up, top-%d\n", front.Name(), name, len(b.Corpus), queries, warmup, k)
			res, err := evallatency.MeasurePipeline(cmd.Context(), front, texts, priors, lcfg, log)
			if err != nil {
				return err
			}
			rep := &evallatency.Report{Pipeline: res, Host: evallatency.HostInfo{Device: hostDevice, GOMAXPROCS: runtime.GOMAXPROCS(0),
				CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Note: fmt.Sprintf("ONNX Runtime intra-op threads: %d (0 = its default).", enc.threads)},
				Provenance: lf.record(h)}
			if !noSweep {
				var mix *evallatency.Mixture
				d, dense := lf.index.(*retrieve.Dense)
				dense = dense && d.Dim() == dim
				if sweepVectors == "fitted" && !dense {
					return fmt.Errorf("eval latency: --sweep-vectors fitted needs a dense retriever of the sweep's dimension %d (use --sweep-vectors isotropic)", dim)
				}
				if sweepVectors == "fitted" || sweepVectors == "auto" && dense {
					embs := make([][]float32, d.Len())
					for i := range embs {
						embs[i] = d.DocVector(i)
					}
					var fit *evallatency.FitReport
					// The fit's neighbour profile needs fewer neighbours than vectors (a --k past the
					// catalog only means every tool is a candidate).
					mix, fit, err = evallatency.FitCatalog(embs, fmt.Sprintf("%s over %s", d.Name(), name), components, min(k, max(1, len(embs)-2)), seed)
					if err != nil {
						return fmt.Errorf("eval latency: --sweep-vectors fitted: %w", err)
					}
					rep.SweepFit = fit
					fmt.Fprintf(log, "eval latency: sweep vectors fitted to %d embeddings: %d components, effective rank %.1f; nearest-neighbour cosine real %.3f, fitted %.3f\n",
						fit.Fitted, fit.Components, fit.EffectiveRank, fit.Real.Nearest, fit.Synthetic.Nearest)
				}
				// The sweep repeats the warm-up per method and size: at most 100 of --warmup's.
				sweepWarmup := min(warmup, 100)
				fmt.Fprintf(log, "eval latency: search sweep: %d queries per method after %d warm-up (--warmup, at most 100)\n", sweepQ, sweepWarmup)
				rep.Search, err = evallatency.MeasureSearch(cmd.Context(), evallatency.SearchConfig{Sizes: sizes, Dim: dim, K: k, Warmup: sweepWarmup,
					Queries: sweepQ, Batch: sweepBatch, Rescore: rescore, ANN: ann, ANNMax: annMax, IVF: ivf, IVFProbes: ivfProbes, IVFMax: ivfMax,
					IndexDir: filepath.Join(h.Dir, "cache", "index"), Vectors: mix, Seed: seed, Now: time.Now}, log)
				if err != nil {
					return err
				}
			}
			if err := evallatency.WriteOutputs(set.Dir(), rep); err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			if err := set.Commit(); err != nil {
				return fmt.Errorf("eval latency: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), evallatency.PipelineTable(rep).Markdown())
			if len(rep.Search) > 0 {
				fmt.Fprintln(cmd.OutOrStdout(), evallatency.SearchTable(rep).Markdown())
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/table3.{md,csv,json,tex}\n", outDir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&benchDir, "bench", "", "benchmark directory in the BEIR layout (default: the embedded default benchmark)")
	f.StringVar(&outDir, "out", "", "output directory (required)")
	f.StringVar(&split, "split", "test", "queries timed: this split's (all queries when it has none)")
	f.StringVar(&encoder, "encoder", "", "installed model folder name, folder path, or openai:URL[#MODEL] (default: the first installed)")
	f.StringVar(&retriever, "retriever", "dense", "dense (the encoder) or bm25 (BM25 + hashed bag of words, no encoder)")
	f.StringVar(&device, "device", encode.DeviceCPU, "cpu or cuda")
	enc.register(f)
	f.StringSliceVar(&policies, "policies", []string{"RATED (Full)", "RATED-R (recommended)", "RATED (w/o Feedback)", "RATED (w/ Global MAB)", "ToolRL-like Batch GRPO"}, "policies of configs/paper.yaml to time, by name")
	f.IntVar(&queries, "queries", 1000, "measured queries (cycled over the split's queries)")
	f.IntVar(&warmup, "warmup", 100, "unmeasured warm-up queries (the search sweep runs at most 100 of them before each method)")
	f.IntVar(&k, "k", 0, "candidates per query (0 = retrieval.k of configs/paper.yaml)")
	f.Float64Var(&failure, "failure-rate", 0.2, "share of simulated failed executions fed back to the policies")
	f.Uint64Var(&seed, "seed", 1, "seed of the simulated outcomes, the policies and the synthetic vectors")
	f.IntSliceVar(&sizes, "sizes", []int{5000, 100000, 1000000}, "catalog sizes of the search sweep")
	f.IntVar(&sweepQ, "sweep-queries", 1000, "measured searches per catalog size")
	f.IntVar(&dim, "sweep-dim", 0, "vector size of the sweep (0 = the encoder's, else 384)")
	f.BoolVar(&noSweep, "no-sweep", false, "skip the catalog-size sweep")
	f.IntVar(&sweepBatch, "sweep-batch", 64, "query batch of the sweep's blocked exact row (1: none)")
	f.IntVar(&rescore, "int8-rescore", 100, "shortlist of the sweep's int8 row re-scored in float32 (0: no int8 row)")
	f.IntVar(&annMax, "ann-max", 5000, "largest sweep size with a coder/hnsw row (0: none; it builds about 140 nodes/s at 20k tools); graphs are kept under <home>/cache/index")
	f.IntVar(&ann.M, "ann-m", ann.M, "HNSW neighbours per node")
	f.IntVar(&ann.EfConstruction, "ann-ef-construction", ann.EfConstruction, "HNSW candidate queue while building")
	f.IntVar(&ann.Candidates, "ann-candidates", ann.Candidates, "HNSW candidates per query, re-scored exactly")
	f.StringVar(&sweepVectors, "sweep-vectors", "auto", "sweep data: fitted (a Gaussian mixture fitted to the catalog's embeddings), isotropic (random unit vectors), or auto (fitted with a dense retriever, else isotropic)")
	f.IntVar(&components, "sweep-components", 0, "components of the fitted mixture (0: one per 20 catalog tools)")
	f.IntVar(&ivfMax, "ivf-max", 1000000, "largest sweep size with inverted-file rows (0: none); lists are kept under <home>/cache/index")
	f.IntVar(&ivf.Lists, "ivf-lists", ivf.Lists, "inverted lists (0: 2·√tools)")
	f.IntSliceVar(&ivfProbes, "ivf-probes", []int{ivf.Probes}, "lists scanned per query, one sweep row each")
	f.IntVar(&ivf.Rescore, "ivf-rescore", ivf.Rescore, "inverted-file shortlist re-scored in float32")
	f.IntVar(&ivf.Sample, "ivf-sample", ivf.Sample, "vectors k-means trains on (0: 32 per list)")
	f.IntVar(&ivf.Iterations, "ivf-iterations", ivf.Iterations, "k-means rounds")
	return cmd
}

// latencyFrontend is the first stage eval latency and reproduce time, with what it is made of.
type latencyFrontend struct {
	front evallatency.Frontend
	// dense says an encoder embeds the queries; dim is its size (the sweep's default).
	dense bool
	dim   int
	// index is the retriever indexing the catalog (its encoder is recorded).
	index retrieve.Retriever
	close func()
}

// openLatencyFrontend builds the front end: with retriever "bm25", BM25 and a hashed bag of
// words of contextDim; otherwise the encoder spec names in src (opened once) indexing docs
// through src's embedding cache, and its uncached view for the timed queries so that
// every query is really encoded. A missing encoder is an error naming the home. Encoding the
// catalog stops with ctx's error once ctx ends.
func openLatencyFrontend(ctx context.Context, src retrieve.EncoderSource, retriever, spec string, docs []bench.Doc, contextDim int, progress func(done, total int)) (*latencyFrontend, error) {
	switch retriever {
	case "bm25":
		hv, err := retrieve.NewLexicalContext(contextDim)
		if err != nil {
			return nil, err
		}
		index := retrieve.NewBM25(docs, retrieve.DefaultBM25Params())
		return &latencyFrontend{front: evallatency.LexicalFrontend{Index: index, Context: hv}, dim: 384, index: index, close: func() {}}, nil
	case "dense", "auto", "":
	default:
		return nil, fmt.Errorf("--retriever %q: want dense or bm25", retriever)
	}
	enc, err := src.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("%w; or time the lexical baseline with --retriever bm25", err)
	}
	idx, err := retrieve.NewDense(enc, docs, retrieve.DenseOptions{Progress: progress, Context: ctx})
	if err != nil {
		enc.Close()
		return nil, err
	}
	// Queries are timed through the same sessions without the cache, so every query is really
	// encoded (an endpoint has no cache).
	var timed encode.Encoder = enc
	if m, ok := enc.Encoder.(*encode.Model); ok {
		timed = m.Uncached()
	}
	return &latencyFrontend{front: evallatency.DenseFrontend{Encoder: timed, Index: idx}, dense: true, dim: enc.Dim(), index: idx,
		close: func() { enc.Close() }}, nil
}

// record is the provenance of a latency run over this front end.
func (l *latencyFrontend) record(h home.Home) provenance.Record {
	r := runRecord(h)
	r.Retriever, r.Encoder = l.front.Name(), provenance.EncoderOf(l.index)
	return r
}

// checkSweepFlags refuses sweep settings that would fail only once their row is reached: the
// graph's and the lists' parameters (each --ivf-probes value), a negative --int8-rescore,
// --ann-max, --ivf-max or --sweep-components, and a --sweep-batch below 1.
func checkSweepFlags(ann retrieve.HNSWParams, annMax int, ivf retrieve.IVFParams, probes []int, ivfMax, rescore, components, batch int) error {
	if batch < 1 { // below 1 used to drop the blocked row without a word
		return fmt.Errorf("--sweep-batch %d: must be at least 1 (1: no blocked exact row)", batch)
	}
	for _, c := range []struct {
		flag string
		v    int
	}{{"int8-rescore", rescore}, {"ann-max", annMax}, {"ivf-max", ivfMax}, {"sweep-components", components}} {
		if c.v < 0 {
			return fmt.Errorf("--%s %d: must be >= 0", c.flag, c.v)
		}
	}
	if annMax > 0 {
		if err := ann.Validate(); err != nil {
			return fmt.Errorf("--ann-m, --ann-ef-construction, --ann-candidates: %w", err)
		}
	}
	if ivfMax > 0 {
		if len(probes) == 0 {
			return errors.New("--ivf-probes: give at least one value (or --ivf-max 0 for no inverted-file rows)")
		}
		for _, p := range probes {
			ivf.Probes = p
			if err := ivf.Validate(); err != nil {
				return fmt.Errorf("--ivf-lists, --ivf-probes %d, --ivf-rescore, --ivf-sample, --ivf-iterations: %w", p, err)
			}
		}
	}
	return nil
}
