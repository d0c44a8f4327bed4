package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/encode/tokenizer"
	"github.com/rated-dev/rated/pkg/metrics"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Config is one fine-tuning run.
type Config struct {
	// Runtime is the training-enabled ONNX Runtime; EncodeRuntime the same library for pkg/encode,
	// which validation uses.
	Runtime       *Runtime
	EncodeRuntime *encode.Runtime
	// Artifacts are the training graph (its batch, negatives, length and τ are bound in it).
	Artifacts *Artifacts
	// ModelDir is the source model folder; OutDir receives the fine-tuned model folder, its
	// TRAINING.md and checkpoints/.
	ModelDir string
	OutDir   string
	// ExportDir receives the exported model folder files and TRAINING.md (default OutDir); the
	// command passes the temporary directory of its output set (internal/outdir), while
	// checkpoints/ stays in OutDir for resuming.
	ExportDir string
	// Name is the fine-tuned model's name in rated.yaml (default: the OutDir base name).
	Name string
	// Bench is the benchmark; BenchDir is recorded in TRAINING.md.
	Bench    *bench.Bench
	BenchDir string
	// TrainSplit and ValSplit name the qrels splits (defaults train and dev); ValSplit "-" turns
	// validation off.
	TrainSplit string
	ValSplit   string
	// NegativesPath is negatives.jsonl (optional; BM25 mining fills what it lacks).
	// NegativeKinds chooses which of its kinds are used, in that order (nil: "hard" first, then
	// the rest); see LoadExamples.
	NegativesPath string
	NegativeKinds []string
	// LR is the peak learning rate, Warmup the warm-up steps, Epochs the passes over the training
	// pairs; MaxSteps > 0 caps the steps.
	LR       float64
	Warmup   int
	Epochs   int
	MaxSteps int
	// Seed drives the data order and random negatives.
	Seed uint64
	// ValEvery validates every so many steps (0: only before and after training); ValMaxQueries
	// caps the validation queries (0: all).
	ValEvery      int
	ValMaxQueries int
	// CheckpointEvery saves checkpoints/last every so many steps (default 100).
	CheckpointEvery int
	// MaxLossRatio stops the run when a loss exceeds this multiple of the larger of ln(candidate
	// documents per query) and the mean of the last 50 losses (0: default 10; negative: off). NaN
	// or infinite losses always stop it.
	MaxLossRatio float64
	// Threads is ONNX Runtime's intra-op thread count (0: all cores).
	Threads int
	// Device ("cpu" or "cuda"), CUDADevice and TF32 choose where the steps and the validation
	// encoding run (SessionOptions).
	Device     string
	CUDADevice int
	TF32       bool
	// Resume continues from OutDir/checkpoints/last when it exists.
	Resume bool
	// Log receives progress lines (nil: discarded). Now is the clock (nil: time.Now).
	Log io.Writer
	Now func() time.Time

	// stopAfter > 0 ends the run with errStopped right after the checkpoint of that step (tests
	// use it to stand for a killed process).
	stopAfter int
}

var errStopped = errors.New("stopped (test hook)")

// ValPoint is one validation measurement.
type ValPoint struct {
	Step int     `json:"step"`
	MRR  float64 `json:"mrr"`
}

// State is what checkpoints/state.json records beside the ONNX Runtime checkpoints.
type State struct {
	// Step is the number of optimizer steps taken (the next step's index).
	Step int `json:"step"`
	// TotalSteps is the planned length of the run; Examples the training pairs.
	TotalSteps int        `json:"total_steps"`
	Examples   int        `json:"examples"`
	Seed       uint64     `json:"seed"`
	Losses     []float32  `json:"losses"`
	LRs        []float64  `json:"lrs"`
	Val        []ValPoint `json:"validation"`
	// BestStep and BestMRR describe checkpoints/best (step 0: the source model).
	BestStep int     `json:"best_step"`
	BestMRR  float64 `json:"best_mrr"`
	// StepSeconds is the wall time spent in ONNX Runtime steps; LoopSeconds the whole loop's.
	StepSeconds float64         `json:"step_seconds"`
	LoopSeconds float64         `json:"loop_seconds"`
	Negatives   NegativeSources `json:"negatives"`
	Library     string          `json:"library"`
	// Settings are what a resume must keep: the run's schedule and data (absent in states
	// written before they were recorded, which resume as before).
	Settings *RunSettings `json:"settings,omitempty"`
}

// RunSettings are the settings a run's steps depend on; a resume with others would change the
// schedule or the batches mid-run. The negatives file is recorded by its sha256, so a moved
// copy resumes and an edited one does not.
type RunSettings struct {
	LR            float64  `json:"lr"`
	Warmup        int      `json:"warmup"`
	Epochs        int      `json:"epochs"`
	MaxSteps      int      `json:"max_steps"`
	TrainSplit    string   `json:"train_split"`
	Negatives     string   `json:"negatives_sha256,omitempty"`
	NegativeKinds []string `json:"negative_kinds"`
}

// settingsOf is cfg's RunSettings.
func settingsOf(cfg Config) (*RunSettings, error) {
	rs := &RunSettings{LR: cfg.LR, Warmup: cfg.Warmup, Epochs: cfg.Epochs, MaxSteps: cfg.MaxSteps, TrainSplit: cfg.TrainSplit,
		NegativeKinds: slices.Clone(cfg.NegativeKinds)}
	if cfg.NegativesPath != "" {
		data, err := os.ReadFile(cfg.NegativesPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err == nil {
			sum := sha256.Sum256(data)
			rs.Negatives = hex.EncodeToString(sum[:])
		}
	}
	return rs, nil
}

// ErrDiverged is returned (wrapped) when the loss turns NaN/infinite or explodes.
var ErrDiverged = errors.New("training diverged")

type trainer struct {
	cfg   Config
	art   *Artifacts
	log   io.Writer
	now   func() time.Time
	ckDir string
	st    State
}

func (c *Config) fill() error {
	if c.Runtime == nil || c.Artifacts == nil || c.Bench == nil {
		return errors.New("finetune: Runtime, Artifacts and Bench are required")
	}
	if c.ModelDir == "" || c.OutDir == "" {
		return errors.New("finetune: ModelDir and OutDir are required")
	}
	if c.Name == "" {
		c.Name = filepath.Base(c.OutDir)
	}
	if c.ExportDir == "" {
		c.ExportDir = c.OutDir
	}
	if c.TrainSplit == "" {
		c.TrainSplit = "train"
	}
	if c.ValSplit == "" {
		c.ValSplit = "dev"
	}
	if c.Epochs <= 0 {
		c.Epochs = 1
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = 100
	}
	if c.MaxLossRatio == 0 {
		c.MaxLossRatio = 10
	}
	if c.LR <= 0 {
		return fmt.Errorf("finetune: learning rate %g must be positive", c.LR)
	}
	if c.ValSplit != "-" && c.EncodeRuntime == nil {
		return errors.New("finetune: validation needs EncodeRuntime")
	}
	return nil
}

// Run fine-tunes, keeps the best checkpoint by validation MRR, and exports the chosen parameters
// (best by validation, else the last) as a model folder in OutDir with TRAINING.md. It returns the
// final state. On divergence it stops with ErrDiverged; checkpoints/last then holds the last good
// state. Once ctx ends it stops between steps with ctx's error, after saving checkpoints/last at
// the step reached, so that the next run resumes there.
func Run(ctx context.Context, cfg Config) (*State, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	t := &trainer{cfg: cfg, art: cfg.Artifacts, log: cfg.Log, now: cfg.Now, ckDir: filepath.Join(cfg.OutDir, "checkpoints")}
	if t.log == nil {
		t.log = io.Discard
	}
	if t.now == nil {
		t.now = time.Now
	}
	return t.run(ctx)
}

func (t *trainer) logf(format string, args ...any) { fmt.Fprintf(t.log, format+"\n", args...) }

func (t *trainer) run(ctx context.Context) (*State, error) {
	cfg, art := t.cfg, t.art
	mcfg, err := encode.LoadConfig(cfg.ModelDir)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.Load(filepath.Join(cfg.ModelDir, mcfg.TowerTokenizer(encode.TowerDoc)))
	if err != nil {
		return nil, err
	}
	asm := &Assembler{Artifacts: art, Tokenizer: tok, QueryPrefix: mcfg.QueryPrefix, DocPrefix: mcfg.DocPrefix}
	dataRNG := rand.New(rand.NewPCG(cfg.Seed, 0x6e656761)) // "nega"
	examples, negSrc, err := LoadExamples(cfg.Bench, cfg.TrainSplit, cfg.NegativesPath, cfg.NegativeKinds, art.Negatives, dataRNG)
	if err != nil {
		return nil, fmt.Errorf("finetune %s: %w", cfg.BenchDir, err)
	}
	// One plan per epoch: a PCG(seed, epoch) permutation cut into batches without false in-batch
	// negatives. Steps index the concatenated plans, so a resumed run continues the same order.
	var plan [][]int
	for epoch := range cfg.Epochs {
		order := rand.New(rand.NewPCG(cfg.Seed, uint64(epoch))).Perm(len(examples))
		plan = append(plan, PlanBatches(examples, order, art.Batch)...)
	}
	if len(plan) == 0 {
		return nil, fmt.Errorf("finetune: %d training pairs in split %s do not make one batch of %d without false negatives", len(examples), cfg.TrainSplit, art.Batch)
	}
	perEpoch := len(plan) / cfg.Epochs
	total := len(plan)
	if cfg.MaxSteps > 0 && cfg.MaxSteps < total {
		total = cfg.MaxSteps
	}
	if err := os.MkdirAll(t.ckDir, 0o755); err != nil {
		return nil, err
	}
	last := filepath.Join(t.ckDir, "last.ckpt")
	best := filepath.Join(t.ckDir, "best.ckpt")
	statePath := filepath.Join(t.ckDir, "state.json")

	startCk := ""
	settings, err := settingsOf(cfg)
	if err != nil {
		return nil, err
	}
	t.st = State{TotalSteps: total, Examples: len(examples), Seed: cfg.Seed, Negatives: negSrc, Library: cfg.Runtime.Version(), BestMRR: -1, Settings: settings}
	if cfg.Resume {
		if err := settlePair(last, statePath); err != nil {
			return nil, err
		}
		if data, err := os.ReadFile(statePath); err == nil {
			if _, err := os.Stat(last); err == nil {
				var st State
				if err := json.Unmarshal(data, &st); err != nil {
					return nil, fmt.Errorf("resume %s: %w", statePath, err)
				}
				if st.Seed != cfg.Seed || st.Examples != len(examples) {
					return nil, fmt.Errorf("resume %s: seed %d and %d pairs there, %d and %d now", statePath, st.Seed, st.Examples, cfg.Seed, len(examples))
				}
				if st.Settings != nil && !reflect.DeepEqual(*st.Settings, *settings) {
					return nil, fmt.Errorf("resume %s: the run was started with %+v and is resumed with %+v: resume with its settings, or start again with --fresh", statePath, *st.Settings, *settings)
				}
				st.Settings = settings
				st.TotalSteps = total
				t.st, startCk = st, last
				t.logf("finetune: resuming at step %d of %d from %s", st.Step, total, last)
			}
		}
	}
	sess, err := cfg.Runtime.OpenSession(art, startCk, cfg.sessionOptions())
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	if startCk != "" && sess.CheckpointStep() != t.st.Step {
		return nil, fmt.Errorf("resume: %s is at step %d, %s at %d", last, sess.CheckpointStep(), statePath, t.st.Step)
	}
	validate := cfg.ValSplit != "-"
	if validate && len(cfg.Bench.RelevantQueries(cfg.ValSplit)) == 0 {
		return nil, fmt.Errorf("finetune: validation split %s has no queries (--val-split - turns validation off)", cfg.ValSplit)
	}
	sched := Schedule{Peak: cfg.LR, Warmup: cfg.Warmup, Total: total}
	t.logf("finetune: %d pairs (%d negatives from file, %d BM25, %d random), batch %d, about %d steps/epoch, %d steps, lr %g, warm-up %d, ONNX Runtime %s",
		len(examples), negSrc.File, negSrc.BM25, negSrc.Random, art.Batch, perEpoch, total, cfg.LR, cfg.Warmup, cfg.Runtime.Version())

	if validate && t.st.Step == 0 && len(t.st.Val) == 0 {
		mrr, err := t.validate(sess)
		if err != nil {
			return nil, err
		}
		t.st.Val = append(t.st.Val, ValPoint{Step: 0, MRR: mrr})
		t.st.BestStep, t.st.BestMRR = 0, mrr
		if err := sess.SaveCheckpoint(best, 0, false); err != nil {
			return nil, err
		}
		t.logf("finetune: step 0 %s MRR %.4f (source model)", cfg.ValSplit, mrr)
	}
	// The checkpoint and its state are one pair: both are written beside their names (.next)
	// and then renamed, the checkpoint first, so a kill leaves either the old pair (and .next
	// files, dropped on resume) or the new checkpoint with its state still .next, which the
	// resume puts in place (settlePair). Renamed one by one, a kill between them left a
	// checkpoint a step ahead of its state and a run that resumed only with --fresh.
	save := func() error {
		if err := sess.SaveCheckpoint(last+".next", t.st.Step, true); err != nil {
			return err
		}
		if err := t.saveState(statePath + ".next"); err != nil {
			return err
		}
		if err := os.Rename(last+".next", last); err != nil {
			return err
		}
		return os.Rename(statePath+".next", statePath)
	}
	loopStart := t.now()
	for t.st.Step < total {
		if err := ctx.Err(); err != nil {
			if t.st.Step > 0 {
				if serr := save(); serr != nil {
					return nil, errors.Join(err, serr)
				}
			}
			return &t.st, fmt.Errorf("finetune: stopped at step %d of %d (checkpoints/last saved; the same command resumes): %w", t.st.Step, total, err)
		}
		step := t.st.Step
		batchEx := make([]Example, art.Batch)
		for i, idx := range plan[step] {
			batchEx[i] = examples[idx]
		}
		b, err := asm.Assemble(batchEx)
		if err != nil {
			return nil, err
		}
		lr := sched.LR(step)
		stepStart := t.now()
		loss, err := sess.TrainStep(b)
		if errors.Is(err, ErrNonFinite) {
			return &t.st, t.diverged(step, lr, fmt.Sprintf("loss %v", loss))
		}
		if err != nil {
			return nil, err
		}
		if ref := t.lossReference(); cfg.MaxLossRatio > 0 && float64(loss) > cfg.MaxLossRatio*ref {
			if err := sess.Discard(); err != nil {
				return nil, err
			}
			return &t.st, t.diverged(step, lr, fmt.Sprintf("loss %.4g exceeds %g x %.4g (the larger of ln(candidates) and the mean of the last %d losses)", loss, cfg.MaxLossRatio, ref, lossWindow))
		}
		if err := sess.Apply(lr); err != nil {
			return nil, err
		}
		t.st.StepSeconds += t.now().Sub(stepStart).Seconds()
		t.st.Losses = append(t.st.Losses, loss)
		t.st.LRs = append(t.st.LRs, lr)
		t.st.Step = step + 1
		if t.st.Step%max(1, min(50, total/20+1)) == 0 || t.st.Step == total {
			t.logf("finetune: step %d/%d loss %.4f lr %.3g", t.st.Step, total, loss, lr)
		}
		if validate && cfg.ValEvery > 0 && t.st.Step%cfg.ValEvery == 0 && t.st.Step < total {
			if err := t.validateAndKeep(sess, best); err != nil {
				return nil, err
			}
		}
		if t.st.Step%cfg.CheckpointEvery == 0 {
			if err := save(); err != nil {
				return nil, err
			}
		}
		if cfg.stopAfter > 0 && t.st.Step == cfg.stopAfter {
			return &t.st, errStopped
		}
	}
	t.st.LoopSeconds += t.now().Sub(loopStart).Seconds()
	if validate && (len(t.st.Val) == 0 || t.st.Val[len(t.st.Val)-1].Step != t.st.Step) {
		if err := t.validateAndKeep(sess, best); err != nil {
			return nil, err
		}
	}
	if err := save(); err != nil {
		return nil, err
	}
	params, err := sess.Parameters()
	if err != nil {
		return nil, err
	}
	chosen := t.st.Step
	if validate && t.st.BestStep != t.st.Step {
		chosen = t.st.BestStep
		bs, err := cfg.Runtime.OpenSession(art, best, cfg.sessionOptions())
		if err != nil {
			return nil, err
		}
		params, err = bs.Parameters()
		bs.Close()
		if err != nil {
			return nil, err
		}
	}
	if err := ExportModel(params, art, cfg.ModelDir, cfg.ExportDir, cfg.Name); err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(cfg.ExportDir, "TRAINING.md"), []byte(t.report(chosen))); err != nil {
		return nil, err
	}
	t.logf("finetune: exported step %d into %s", chosen, cfg.OutDir)
	return &t.st, nil
}

// lossWindow is how many recent losses the explosion check averages.
const lossWindow = 50

// lossReference is the scale an exploding loss is measured against: ln(number of candidate
// documents per query), the loss of an uninformed encoder, or the mean of the last lossWindow
// losses when that is larger. A loss many times above it means the weights have blown up; a hard
// batch does not reach it (the loss is at most ln(candidates) + 2/τ).
func (t *trainer) lossReference() float64 {
	ref := math.Log(float64(t.art.Batch * (1 + t.art.Negatives)))
	n := len(t.st.Losses)
	if n == 0 {
		return ref
	}
	var sum float64
	for _, l := range t.st.Losses[max(0, n-lossWindow):] {
		sum += float64(l)
	}
	return max(ref, sum/float64(min(n, lossWindow)))
}

func (t *trainer) diverged(step int, lr float64, what string) error {
	lastGood := "none yet (no checkpoint saved before this step)"
	if _, err := os.Stat(filepath.Join(t.ckDir, "last.ckpt")); err == nil {
		var st State
		if data, err := os.ReadFile(filepath.Join(t.ckDir, "state.json")); err == nil && json.Unmarshal(data, &st) == nil {
			lastGood = fmt.Sprintf("%s (step %d)", filepath.Join(t.ckDir, "last.ckpt"), st.Step)
		}
	}
	return fmt.Errorf("%w at step %d (lr %.3g): %s; nothing of this step was applied; last good checkpoint: %s; lower --lr or raise --warmup", ErrDiverged, step, lr, what, lastGood)
}

func (t *trainer) validateAndKeep(sess *Session, best string) error {
	mrr, err := t.validate(sess)
	if err != nil {
		return err
	}
	t.st.Val = append(t.st.Val, ValPoint{Step: t.st.Step, MRR: mrr})
	mark := ""
	if mrr > t.st.BestMRR {
		t.st.BestStep, t.st.BestMRR = t.st.Step, mrr
		if err := sess.SaveCheckpoint(best, t.st.Step, false); err != nil {
			return err
		}
		mark = " (best)"
	}
	t.logf("finetune: step %d %s MRR %.4f%s", t.st.Step, t.cfg.ValSplit, mrr, mark)
	return nil
}

// validate exports the current parameters into a scratch model folder and measures MRR on the
// validation split with pkg/encode, exactly as the exported model will be used.
func (t *trainer) validate(sess *Session) (float64, error) {
	params, err := sess.Parameters()
	if err != nil {
		return 0, err
	}
	dir := filepath.Join(t.ckDir, "validation-model")
	if err := ExportModel(params, t.art, t.cfg.ModelDir, dir, t.cfg.Name+"-validation"); err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	return ValidationMRR(t.cfg.EncodeRuntime, dir, t.cfg.Bench, t.cfg.ValSplit, t.cfg.ValMaxQueries,
		encode.Options{Threads: t.cfg.Threads, Device: t.cfg.Device, CUDADevice: t.cfg.CUDADevice})
}

func (cfg *Config) sessionOptions() SessionOptions {
	return SessionOptions{Threads: cfg.Threads, Device: cfg.Device, CUDADevice: cfg.CUDADevice, TF32: cfg.TF32}
}

// ValidationMRR is the mean reciprocal rank (full ranking, cosine similarity over the whole
// corpus) of a model folder on a split, over its first maxQueries queries (0: all). opts sets
// threads and device; its Runtime and LoadTokenizer are rt and this package's tokenizer.
func ValidationMRR(rt *encode.Runtime, modelDir string, b *bench.Bench, split string, maxQueries int, opts encode.Options) (float64, error) {
	opts.Runtime, opts.LoadTokenizer = rt, LoadEncodeTokenizer
	m, err := encode.Open(modelDir, opts)
	if err != nil {
		return 0, err
	}
	defer m.Close()
	// The queries with a relevant tool, as eval offline evaluates (a query whose qrels grade
	// every tool 0 scored 0 here and lowered the MRR that picks the best checkpoint).
	queries := b.RelevantQueries(split)
	if maxQueries > 0 && len(queries) > maxQueries {
		queries = queries[:maxQueries]
	}
	if len(queries) == 0 {
		return 0, fmt.Errorf("validation: split %s has no queries", split)
	}
	docTexts := make([]string, len(b.Corpus))
	for i, d := range b.Corpus {
		docTexts[i] = retrieve.DocText(d)
	}
	docs, err := m.EncodeDocs(docTexts)
	if err != nil {
		return 0, err
	}
	qTexts := make([]string, len(queries))
	for i, q := range queries {
		qTexts[i] = q.Text
	}
	qv, err := m.EncodeQueries(qTexts)
	if err != nil {
		return 0, err
	}
	var sum float64
	scores := make([]float64, len(docs))
	idx := make([]int, len(docs))
	ranking := make([]string, len(docs))
	for i, q := range queries {
		for j, d := range docs {
			var dot float64
			for k := range d {
				dot += float64(qv[i][k]) * float64(d[k])
			}
			scores[j] = dot
			idx[j] = j
		}
		sort.SliceStable(idx, func(a, c int) bool { return scores[idx[a]] > scores[idx[c]] })
		for r, j := range idx {
			ranking[r] = b.Corpus[j].ID
		}
		sum += metrics.ReciprocalRank(ranking, metrics.Judgments(b.Splits[split][q.ID]), 0)
	}
	return sum / float64(len(queries)), nil
}

// settlePair finishes or undoes a checkpoint save that a kill interrupted (see save in run):
// with the checkpoint still .next, the old pair stands and the .next files go; with only the
// state .next, the checkpoint was renamed and its state is put in place.
func settlePair(last, statePath string) error {
	if _, err := os.Stat(last + ".next"); err == nil {
		os.Remove(last + ".next")
		os.Remove(statePath + ".next")
		return nil
	}
	if _, err := os.Stat(statePath + ".next"); err == nil {
		if err := os.Rename(statePath+".next", statePath); err != nil {
			return fmt.Errorf("resume: put %s.next in place: %w", statePath, err)
		}
	}
	return nil
}

func (t *trainer) saveState(path string) error {
	data, err := json.MarshalIndent(&t.st, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(data, '\n'))
}
