package cmd

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rated-dev/rated/internal/outdir"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/evaldynamic"
	"github.com/rated-dev/rated/pkg/setup"
	"github.com/rated-dev/rated/pkg/synth"
	"github.com/rated-dev/rated/pkg/train"
)

// newFinetuneCmd builds `rated finetune`: InfoNCE fine-tuning of a model folder on a BEIR
// benchmark through ONNX Runtime's training API (pkg/train, docs/FINETUNE.md).
func newFinetuneCmd() *cobra.Command {
	var (
		modelDir, benchDir, outDir, artifactsDir, lib, negatives, name    string
		trainSplit, valSplit, towers, device, builder                     string
		batch, negPer, maxLen, warmup, epochs, maxSteps, valEvery, valMax int
		ckEvery, threads, cudaDevice                                      int
		lr, tau, maxLossRatio                                             float64
		seed                                                              uint64
		fresh, tf32                                                       bool
		negativeKinds                                                     []string
	)
	cmd := &cobra.Command{
		Use:   "finetune --model DIR --bench DIR --out DIR",
		Short: "Fine-tune a text encoder with in-batch InfoNCE and hard negatives (ONNX Runtime training)",
		Long: `Fine-tunes the model folder --model on the train split of the BEIR benchmark --bench with the
paper's contrastive recipe (InfoNCE over in-batch positives and hard negatives, tau 0.05, batch 8,
lr 1e-5 with 1,000 warm-up steps then linear decay, max length 256, 1 epoch), validating MRR on the
dev split every --val-every steps and keeping the best checkpoint. Hard negatives come from
BENCH/negatives.jsonl (rated build-bench; or negatives.jsonl.gz) and, where it lacks them, from
BM25. --bench may also be a rated build-bench output folder or the shipped release data/ecoagent
(gzip-compressed files): its EcoAgent-Syn (syn/) is then the benchmark, as in the paper.

The training graph is built once into OUT/artifacts by scripts/train/build_artifacts.py (embedded in
the binary; Python venv <asset home>/train-venv from "rated setup training") unless --artifacts
names one. Steps run in Go through the training-enabled ONNX Runtime
<asset home>/lib/training/libonnxruntime.so (CPU build), or with --device cuda through
<asset home>/lib/training-gpu/libonnxruntime.so (RATED_GPU=1 rated setup training; CUDA execution
provider, fp32; no mixed precision: the training API has none). Validation encodes on the same
device.

OUT receives model.onnx (or query_model.onnx and doc_model.onnx for --towers dual),
tokenizer.json, rated.yaml, TRAINING.md and checkpoints/; rerunning the same command resumes from
checkpoints/last unless --fresh.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if modelDir == "" || benchDir == "" || outDir == "" {
				return errors.New("finetune: --model, --bench and --out are required")
			}
			if device != encode.DeviceCPU && device != encode.DeviceCUDA {
				return fmt.Errorf("finetune: --device %q: want cpu or cuda", device)
			}
			for _, k := range negativeKinds {
				if k != train.NegativeHard && k != train.NegativeRandom {
					return fmt.Errorf("finetune: --negative-kinds %q: want %s and/or %s", k, train.NegativeHard, train.NegativeRandom)
				}
			}
			if towers != train.TowersShared && towers != train.TowersDual {
				return fmt.Errorf("finetune: --towers %q: want %s or %s", towers, train.TowersShared, train.TowersDual)
			}
			if err := checkFinetuneNumbers(map[string]float64{"tau": tau, "lr": lr}, map[string]int{
				"batch": batch, "hard-negatives": negPer, "max-len": maxLen, "warmup": warmup, "epochs": epochs, "max-steps": maxSteps,
				"val-every": valEvery, "val-max-queries": valMax, "checkpoint-every": ckEvery, "threads": threads, "cuda-device": cudaDevice,
			}, maxLossRatio); err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			if name == "" {
				name = filepath.Base(filepath.Clean(outDir))
			}
			log := cmd.ErrOrStderr()
			h, err := assetHome(cmd)
			if err != nil {
				return err
			}
			// The model, the benchmark and its splits are checked before the output set begins
			// and the training graph is built (15 s or more, 87 MB), so a wrong flag fails at once.
			if !fileExists(filepath.Join(modelDir, "rated.yaml")) {
				installed := filepath.Join(h.ModelsDir(), modelDir)
				if filepath.Base(modelDir) != modelDir || !fileExists(filepath.Join(installed, "rated.yaml")) {
					return fmt.Errorf("finetune: --model %s: not a model folder (no rated.yaml); give a folder or the name of one installed under %s (rated setup models)", modelDir, h.ModelsDir())
				}
				modelDir = installed // an installed model's name, as the other commands take it
			}
			if err := refuseOverlap(outDir, input{"--model", modelDir}, input{"--bench", benchDir}); err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			if negatives != "" && !bench.FileExists(negatives) {
				return fmt.Errorf("finetune: --negatives %s: no such file (leave the flag out for BENCH/negatives.jsonl, or BM25 negatives where there is none)", negatives)
			}
			if synDir, ok := buildBenchSynDir(benchDir); ok {
				fmt.Fprintf(log, "finetune: %s is a rated build-bench output folder: training on its EcoAgent-Syn, %s\n", benchDir, synDir)
				benchDir = synDir
			}
			b, err := bench.ReadDir(benchDir)
			if err != nil {
				return err
			}
			if err := checkFinetuneSplits(b, benchDir, trainSplit, valSplit); err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			set, err := outdir.Begin(outDir, finetuneOutput())
			if err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			defer set.Abort()
			if lib == "" {
				lib = h.TrainingLibrary()
				if device == encode.DeviceCUDA {
					// The GPU build when 55-training-gpu.sh installed it; else the CPU build, whose
					// session then fails with ErrNoCUDA naming the library and the GPU build.
					if gpu := h.TrainingGPULibrary(); fileExists(gpu) {
						lib = gpu
					}
				}
			}
			// The library before the training graph is built (minutes, in the builder's venv).
			if !fileExists(lib) {
				return h.Missing("training-enabled ONNX Runtime library", lib, "training")
			}
			if negatives == "" {
				negatives = filepath.Join(benchDir, "negatives.jsonl")
			}
			if fresh {
				if err := os.RemoveAll(set.Live("checkpoints")); err != nil {
					return err
				}
			}
			if artifactsDir == "" {
				artifactsDir = set.Live("artifacts")
				if _, err := os.Stat(filepath.Join(artifactsDir, "artifacts.json")); err != nil {
					python := filepath.Join(h.TrainVenv(), "bin", "python")
					if !fileExists(python) {
						return fmt.Errorf("finetune: %w; or pass --artifacts", h.Missing("training venv", python, "training"))
					}
					build := func(script string) error {
						args := []string{script, "--model", modelDir, "--out", artifactsDir, "--batch", strconv.Itoa(batch),
							"--negatives", strconv.Itoa(negPer), "--seq", strconv.Itoa(maxLen), "--tau", strconv.FormatFloat(tau, 'g', -1, 64),
							"--towers", towers}
						fmt.Fprintf(log, "finetune: building training artifacts: %s %v\n", python, args)
						out, err := exec.Command(python, args...).CombinedOutput()
						if err != nil {
							return fmt.Errorf("finetune: artifact builder failed: %w\n%s", err, tail(out, 2000))
						}
						return nil
					}
					if builder != "" {
						err = build(builder)
					} else {
						// The builder embedded in the binary (scripts/train/build_artifacts.py).
						err = setup.WithBundle(func(root string) error {
							return build(filepath.Join(root, "scripts", "train", "build_artifacts.py"))
						})
					}
					if err != nil {
						return err
					}
				}
			}
			art, err := train.LoadArtifacts(artifactsDir)
			if err != nil {
				return err
			}
			if art.Batch != batch || art.Negatives != negPer || art.Seq != maxLen || art.Tau != tau || art.Towers != towers {
				return fmt.Errorf("finetune: %s was built with batch %d, hard negatives %d, length %d, tau %g, towers %s; the flags ask for %d, %d, %d, %g, %s: delete it or pass matching flags",
					artifactsDir, art.Batch, art.Negatives, art.Seq, art.Tau, art.Towers, batch, negPer, maxLen, tau, towers)
			}
			if err := checkArtifactsModel(art, modelDir); err != nil {
				return err
			}
			rt, err := train.OpenRuntime(lib)
			if err != nil {
				return err
			}
			defer rt.Close()
			st, err := train.Run(cmd.Context(), train.Config{
				Runtime: rt, EncodeRuntime: encode.NewRuntime(lib), Artifacts: art, ModelDir: modelDir, OutDir: set.Final(), ExportDir: set.Dir(), Name: name,
				Bench: b, BenchDir: benchDir, TrainSplit: trainSplit, ValSplit: valSplit, NegativesPath: negatives, NegativeKinds: negativeKinds,
				LR: lr, Warmup: warmup, Epochs: epochs, MaxSteps: maxSteps, Seed: seed, ValEvery: valEvery, ValMaxQueries: valMax,
				CheckpointEvery: ckEvery, MaxLossRatio: maxLossRatio, Threads: threads, Resume: true, Log: log,
				Device: device, CUDADevice: cudaDevice, TF32: tf32,
			})
			if err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			if err := set.Commit(); err != nil {
				return fmt.Errorf("finetune: %w", err)
			}
			if len(st.Val) > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "%s MRR: step 0 %.4f, best step %d %.4f; model folder %s\n", valSplit, st.Val[0].MRR, st.BestStep, st.BestMRR, outDir)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "trained %d steps; model folder %s\n", st.Step, outDir)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&modelDir, "model", "", "source model folder (model.onnx, tokenizer.json, rated.yaml)")
	f.StringVar(&benchDir, "bench", "", "BEIR benchmark folder with qrels/train.tsv (and dev.tsv), or a rated build-bench output folder (its syn/ is used)")
	f.StringVar(&outDir, "out", "", "output model folder")
	f.StringVar(&name, "name", "", "model name in rated.yaml (default: the --out folder name)")
	f.StringVar(&artifactsDir, "artifacts", "", "prebuilt training artifacts (default: build into OUT/artifacts)")
	f.StringVar(&builder, "builder", "", "artifact builder script (default: scripts/train/build_artifacts.py, embedded in the binary)")
	f.StringVar(&lib, "lib", "", "training-enabled ONNX Runtime (default <asset home>/lib/training/libonnxruntime.so, rated setup training)")
	f.StringVar(&negatives, "negatives", "", "hard negatives file (default BENCH/negatives.jsonl; missing: BM25)")
	f.StringSliceVar(&negativeKinds, "negative-kinds", nil, "kinds of negatives.jsonl to use, in order: hard, random (default: hard first, then random)")
	f.StringVar(&trainSplit, "train-split", "train", "qrels split to train on")
	f.StringVar(&valSplit, "val-split", "dev", "qrels split to validate on (- for none)")
	f.StringVar(&towers, "towers", train.TowersShared, "shared (one encoder) or dual (DRAGON-style query and document towers)")
	f.StringVar(&device, "device", encode.DeviceCPU, "execution device: cpu, or cuda (needs the GPU library of RATED_GPU=1 rated setup training, CUDA 13 and cuDNN 9)")
	f.IntVar(&cudaDevice, "cuda-device", 0, "GPU ordinal for --device cuda")
	f.BoolVar(&tf32, "tf32", false, "with --device cuda, let matrix products use TensorFloat-32 (faster, about 1e-3 relative error; default plain fp32)")
	f.IntVar(&batch, "batch", 8, "queries per step (bound into the graph)")
	f.IntVar(&negPer, "hard-negatives", 1, "hard negatives per query (bound into the graph)")
	f.IntVar(&maxLen, "max-len", 256, "token length every row is padded or truncated to (bound into the graph)")
	f.Float64Var(&tau, "tau", paperConfig().Retrieval.Tau, "InfoNCE temperature (bound into the graph; default retrieval.tau of configs/paper.yaml)")
	f.Float64Var(&lr, "lr", 1e-5, "peak learning rate (AdamW)")
	f.IntVar(&warmup, "warmup", 1000, "linear warm-up steps")
	f.IntVar(&epochs, "epochs", 1, "passes over the training pairs")
	f.IntVar(&maxSteps, "max-steps", 0, "stop after this many steps (0: epochs)")
	f.Uint64Var(&seed, "seed", 1, "seed of the data order and random negatives")
	f.IntVar(&valEvery, "val-every", 500, "validate every N steps (0: only before and after)")
	f.IntVar(&valMax, "val-max-queries", 0, "cap on validation queries (0: all)")
	f.IntVar(&ckEvery, "checkpoint-every", 100, "save checkpoints/last every N steps")
	f.Float64Var(&maxLossRatio, "max-loss-ratio", 10, "stop when a loss exceeds this multiple of max(ln(candidates), mean of the last 50 losses) (negative: off)")
	f.IntVar(&threads, "threads", 0, "ONNX Runtime intra-op threads (0: all cores)")
	f.BoolVar(&fresh, "fresh", false, "discard OUT/checkpoints instead of resuming")
	return cmd
}

// checkFinetuneNumbers refuses numeric flags that cannot train, before the benchmark is read or
// the training graph is built: tau and lr must be finite and > 0, batch ≥ 1, max-len ≥ 2 ([CLS]
// and [SEP]), epochs ≥ 1 (--max-steps stops earlier), the other counts ≥ 0, and max-loss-ratio not NaN (negative turns the check off).
func checkFinetuneNumbers(positive map[string]float64, counts map[string]int, maxLossRatio float64) error {
	for _, name := range slices.Sorted(maps.Keys(positive)) {
		if v := positive[name]; !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("--%s %v: must be a finite number > 0", name, v)
		}
	}
	least := map[string]int{"batch": 1, "max-len": 2, "epochs": 1}
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if v := counts[name]; v < least[name] {
			return fmt.Errorf("--%s %d: must be at least %d", name, v, least[name])
		}
	}
	if math.IsNaN(maxLossRatio) {
		return fmt.Errorf("--max-loss-ratio %v: must be a number (negative: off)", maxLossRatio)
	}
	return nil
}

// checkArtifactsModel refuses training artifacts built from another model than --model: the
// run would train the artifacts' weights with their pooling and export them into --model's
// graph under --model's name, tokenizer and prefixes (bge-small's weights as an e5-small-v2
// fine-tune). Pooling must match --model's rated.yaml, and the source model.onnx, where it is
// still on disk, must have --model's bytes.
func checkArtifactsModel(art *train.Artifacts, modelDir string) error {
	mcfg, err := encode.LoadConfig(modelDir)
	if err != nil {
		return err
	}
	if art.Pooling != mcfg.Pooling {
		return fmt.Errorf("finetune: %s was built with %s pooling, but --model %s pools by %s: the artifacts are another model's (delete them, or give --artifacts for this model)", art.Dir, art.Pooling, modelDir, mcfg.Pooling)
	}
	if art.SourceModel == "" || !fileExists(art.SourceModel) {
		return nil
	}
	mine := filepath.Join(modelDir, "model.onnx")
	if same, err := sameFile(art.SourceModel, mine); err != nil {
		return err
	} else if !same {
		return fmt.Errorf("finetune: %s was built from %s, whose bytes differ from --model's %s: the artifacts are another model's (delete them, or give --artifacts for this model)", art.Dir, art.SourceModel, mine)
	}
	return nil
}

// sameFile reports whether two files hold the same bytes (the same file, or equal sha256).
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	if os.SameFile(sa, sb) {
		return true, nil
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ha, err := synth.FileSHA256(a)
	if err != nil {
		return false, err
	}
	hb, err := synth.FileSHA256(b)
	return ha == hb, err
}

// checkFinetuneSplits refuses a --train-split the benchmark lacks or whose qrels name no relevant
// tool, and a --val-split ("-": none) without queries, naming the flag and the qrels file.
func checkFinetuneSplits(b *bench.Bench, dir, trainSplit, valSplit string) error {
	have := slices.Sorted(maps.Keys(b.Splits))
	if _, ok := b.Splits[trainSplit]; !ok {
		return fmt.Errorf("--train-split %q: %s has no qrels/%s.tsv (have %v)", trainSplit, dir, trainSplit, have)
	}
	if len(b.RelevantQueries(trainSplit)) == 0 {
		return fmt.Errorf("--train-split %q: %s/qrels/%s.tsv names no relevant tool of a query in queries.jsonl: nothing to train on", trainSplit, dir, trainSplit)
	}
	if valSplit == "-" {
		return nil
	}
	if _, ok := b.Splits[valSplit]; !ok {
		return fmt.Errorf("--val-split %q: %s has no qrels/%s.tsv (have %v; --val-split - turns validation off)", valSplit, dir, valSplit, have)
	}
	if valSplit == trainSplit {
		return fmt.Errorf("--val-split %q is the --train-split: the best checkpoint would be chosen on the queries it trained on (give another split, or --val-split - to turn validation off)", valSplit)
	}
	if len(b.RelevantQueries(valSplit)) == 0 {
		return fmt.Errorf("--val-split %q: %s/qrels/%s.tsv names no relevant tool of a query in queries.jsonl, so every validation MRR would be 0 (--val-split - turns validation off)", valSplit, dir, valSplit)
	}
	return nil
}

// buildBenchSynDir reports DIR/syn when DIR is a `rated build-bench` output folder or the shipped
// release data/ecoagent (no corpus of its own, a syn/ benchmark inside, its files plain or
// gzip-compressed as the release stores them): the fine-tuning data the paper uses.
func buildBenchSynDir(dir string) (string, bool) {
	syn := filepath.Join(dir, "syn")
	if bench.FileExists(filepath.Join(dir, "corpus.jsonl")) || !bench.FileExists(filepath.Join(syn, "corpus.jsonl")) {
		return "", false
	}
	return syn, true
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// paperConfig is the embedded configs/paper.yaml. It is valid by construction (TestPaperConfig…
// in pkg/evaldynamic), so a failure here is a build defect, not a user error.
func paperConfig() *evaldynamic.Config {
	cfg, err := evaldynamic.PaperConfig()
	if err != nil {
		panic(fmt.Sprintf("embedded configs/paper.yaml: %v", err))
	}
	return cfg
}
