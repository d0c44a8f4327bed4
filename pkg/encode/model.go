package encode

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/rated-dev/rated/pkg/provenance"
)

// Options configures how a model folder is run.
type Options struct {
	// Runtime is the loaded ONNX Runtime library (required); share one per process.
	Runtime *Runtime
	// Device is DeviceCPU (default) or DeviceCUDA; CUDA fails with a clear error when the library
	// has no CUDA execution provider or no GPU is usable.
	Device string
	// CUDADevice is the GPU ordinal for DeviceCUDA.
	CUDADevice int
	// Threads is ONNX Runtime's intra-op thread count; 0 lets ONNX Runtime choose.
	Threads int
	// BatchSize is the most texts per ONNX Runtime call (default DefaultBatchSize).
	BatchSize int
	// BatchTokens bounds the padded tokens of one ONNX Runtime call (rows × longest row; default
	// DefaultBatchTokens): a call's texts are tokenized first and sorted by token count, so each
	// batch holds texts of nearly equal length and padding stays small.
	BatchTokens int
	// CacheDir, when set, keeps embeddings on disk keyed by (model sha256, tower, settings, text)
	// so a catalog is encoded once (typically the asset home's cache/embeddings).
	CacheDir string
	// LoadTokenizer loads a tokenizer.json; nil uses pkg/encode/tokenizer.
	LoadTokenizer TokenizerLoader
}

// Batching defaults, chosen by measurement (docs/BENCHMARKS.md, "Encoding by a padded-token
// budget").
const (
	DefaultBatchSize   = 64
	DefaultBatchTokens = 2048
)

// Model is an opened model folder: one or two ONNX towers, their tokenizers and pooling. It
// implements Encoder. Methods are safe for concurrent use. Close releases the sessions.
type Model struct {
	dir    string
	cfg    *Config
	opts   Options
	towers map[string]*tower
}

// tower is the query or the document side of a model.
type tower struct {
	name   string
	sess   *session
	tok    Tokenizer
	prefix string
	cache  *embeddingCache

	cacheOnce sync.Once
	cacheErr  error
}

var _ Encoder = (*Model)(nil)

// Open reads dir/rated.yaml, loads the tokenizer(s) and the ONNX model(s) of the towers the folder
// provides, and checks inputs, outputs and dimensions. Errors name the offending file.
func Open(dir string, opts Options) (*Model, error) {
	if opts.Runtime == nil {
		return nil, errors.New("encode.Open: Options.Runtime is nil")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.BatchTokens <= 0 {
		opts.BatchTokens = DefaultBatchTokens
	}
	load := opts.LoadTokenizer
	if load == nil {
		load = defaultTokenizerLoader
	}
	cfg, err := LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	if cfg.Kind != KindBiEncoder {
		return nil, fmt.Errorf("%s: kind %s is not an embedding model (use retrieve.NewCrossEncoder)", filepath.Join(dir, ConfigFile), cfg.Kind)
	}
	if cfg.BatchTokens > 0 {
		opts.BatchTokens = min(opts.BatchTokens, cfg.BatchTokens)
	}
	if err := verifyRecorded(dir, cfg, func(path string) (string, error) { return opts.Runtime.digests.sum(path, nil) }); err != nil {
		return nil, err
	}
	m := &Model{dir: dir, cfg: cfg, opts: opts, towers: map[string]*tower{}}
	sessions := map[string]*session{}
	toks := map[string]Tokenizer{}
	for _, name := range []string{TowerQuery, TowerDoc} {
		if !cfg.HasTower(name) {
			continue
		}
		modelPath := filepath.Join(dir, cfg.TowerModel(name))
		tokPath := filepath.Join(dir, cfg.TowerTokenizer(name))
		tok, ok := toks[tokPath]
		if !ok {
			if _, err := os.Stat(tokPath); err != nil {
				m.Close()
				return nil, fmt.Errorf("tokenizer file %s: %w", tokPath, err)
			}
			tok, err = load(tokPath)
			if err != nil {
				m.Close()
				return nil, fmt.Errorf("tokenizer file %s: %w", tokPath, err)
			}
			toks[tokPath] = tok
		}
		sess, ok := sessions[modelPath]
		if !ok {
			sess, err = openSession(opts.Runtime, modelPath, cfg.Output, cfg.Pooling, cfg.Dim, opts)
			if err != nil {
				m.Close()
				return nil, err
			}
			sessions[modelPath] = sess
			if err := fitMaxLength(cfg, dir, sess); err != nil {
				m.Close()
				return nil, err
			}
		}
		prefix := cfg.QueryPrefix
		if name == TowerDoc {
			prefix = cfg.DocPrefix
		}
		m.towers[name] = &tower{name: name, sess: sess, tok: tok, prefix: prefix}
	}
	// Both towers must agree on the dimension: they are compared by dot product.
	if q, d := m.towers[TowerQuery], m.towers[TowerDoc]; q != nil && d != nil && q.sess.dim != d.sess.dim {
		m.Close()
		return nil, fmt.Errorf("model folder %s: query tower %s has dimension %d, doc tower %s has %d", dir, q.sess.path, q.sess.dim, d.sess.path, d.sess.dim)
	}
	if opts.CacheDir != "" {
		for _, t := range m.towers {
			tokSum, err := opts.Runtime.digests.sum(filepath.Join(dir, cfg.TowerTokenizer(t.name)), nil)
			if err != nil {
				m.Close()
				return nil, err
			}
			settings := fmt.Sprintf("tokenizer=%s pooling=%s normalize=%v max_length=%d output=%s", tokSum, cfg.Pooling, cfg.NormalizeEnabled(), cfg.MaxLength, t.sess.output)
			sum := sha256.Sum256([]byte(settings))
			file := filepath.Join(opts.CacheDir, fmt.Sprintf("%s-%s-%s", sanitize(cfg.Name), t.sess.sha256[:16], hex.EncodeToString(sum[:])[:8]), t.name+".bin")
			t.cache = newEmbeddingCache(file, t.sess.dim)
		}
	}
	return m, nil
}

// Close releases the ONNX Runtime sessions.
func (m *Model) Close() error {
	var errs []error
	seen := map[*session]bool{}
	for _, t := range m.towers {
		if t.sess != nil && !seen[t.sess] {
			seen[t.sess] = true
			errs = append(errs, t.sess.close())
		}
	}
	return errors.Join(errs...)
}

// Name is the model's name (rated.yaml name, default the folder name).
func (m *Model) Name() string { return m.cfg.Name }

// Dim is the embedding size.
func (m *Model) Dim() int {
	for _, t := range m.towers {
		return t.sess.dim
	}
	return 0
}

// Config returns the model folder's parsed rated.yaml.
func (m *Model) Config() Config { return *m.cfg }

// Dir is the model folder.
func (m *Model) Dir() string { return m.dir }

// ModelSHA256 returns the sha256 of a tower's ONNX file, or "" when the folder lacks the tower.
func (m *Model) ModelSHA256(towerName string) string {
	if t := m.towers[towerName]; t != nil {
		return t.sess.sha256
	}
	return ""
}

// EncodeQueries embeds queries with the query tower (query prefix applied).
func (m *Model) EncodeQueries(texts []string) ([][]float32, error) {
	return m.encode(context.Background(), TowerQuery, texts, true, nil)
}

// EncodeDocs embeds documents with the document tower (doc prefix applied).
func (m *Model) EncodeDocs(texts []string) ([][]float32, error) {
	return m.encode(context.Background(), TowerDoc, texts, true, nil)
}

// EncodeDocsProgress is EncodeDocs reporting (texts done, total) after every batch, so a whole
// corpus can be embedded in one call (one sort by token count over all of it) with progress; it
// stops with ctx's error between batches once ctx ends (the batches embedded so far stay in the
// cache, so a run started again resumes there).
func (m *Model) EncodeDocsProgress(ctx context.Context, texts []string, progress func(done, total int)) ([][]float32, error) {
	return m.encode(ctx, TowerDoc, texts, true, progress)
}

// Uncached returns an Encoder over the same sessions that neither reads nor writes the embedding
// cache: latency measurements time real forward passes without opening the model a second time.
func (m *Model) Uncached() Encoder { return uncachedModel{m} }

type uncachedModel struct{ m *Model }

func (u uncachedModel) Name() string { return u.m.Name() }

// EncoderIdentity is the model's: skipping the cache changes no embedding.
func (u uncachedModel) EncoderIdentity() provenance.Encoder { return u.m.EncoderIdentity() }
func (u uncachedModel) Dim() int                            { return u.m.Dim() }
func (u uncachedModel) EncodeQueries(texts []string) ([][]float32, error) {
	return u.m.encode(context.Background(), TowerQuery, texts, false, nil)
}
func (u uncachedModel) EncodeDocs(texts []string) ([][]float32, error) {
	return u.m.encode(context.Background(), TowerDoc, texts, false, nil)
}

func (m *Model) encode(ctx context.Context, towerName string, texts []string, useCache bool, progress func(done, total int)) ([][]float32, error) {
	t := m.towers[towerName]
	if t == nil {
		return nil, fmt.Errorf("model %s (%s): no %s tower (towers: %s)", m.cfg.Name, m.dir, towerName, m.cfg.Towers)
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	inputs := make([]string, len(texts))
	for i, s := range texts {
		inputs[i] = t.prefix + s
	}
	cache := t.cache
	if !useCache {
		cache = nil
	}
	var keys [][32]byte
	var missing []int
	if cache != nil {
		t.cacheOnce.Do(func() { t.cacheErr = cache.load() })
		if t.cacheErr != nil {
			return nil, t.cacheErr
		}
		keys = make([][32]byte, len(texts))
		for i, s := range inputs {
			keys[i] = sha256.Sum256([]byte(s))
			if v, ok := cache.get(keys[i]); ok {
				out[i] = v
			} else {
				missing = append(missing, i)
			}
		}
	} else {
		missing = make([]int, len(texts))
		for i := range missing {
			missing[i] = i
		}
	}
	done := len(texts) - len(missing)
	if progress != nil {
		progress(done, len(texts))
	}
	if len(missing) == 0 {
		return out, nil
	}
	batches, err := m.planBatches(t, inputs, missing)
	if err != nil {
		return nil, err
	}
	for _, idx := range batches {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("model %s: stopped after %d of %d texts: %w", m.cfg.Name, done, len(texts), err)
		}
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = inputs[i]
		}
		vecs, err := m.embedTexts(t, batch)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			out[i] = vecs[j]
		}
		// Each batch is appended to the cache as soon as it is embedded, so an interrupted run
		// resumes where it stopped.
		if cache != nil {
			fresh := make([]cacheEntry, len(idx))
			for j, i := range idx {
				fresh[j] = cacheEntry{key: keys[i], vec: out[i]}
			}
			if err := cache.add(fresh); err != nil {
				return nil, err
			}
		}
		done += len(idx)
		if progress != nil {
			progress(done, len(texts))
		}
	}
	return out, nil
}

// planBatches tokenizes the texts of missing once to count their tokens, sorts them by count
// (longest first, ties in input order) and cuts batches whose padded size, rows × longest row,
// stays within Options.BatchTokens and whose rows stay within Options.BatchSize. Sorting the
// whole input rather than each batch keeps padding near zero: a batch holds texts of nearly
// equal length. A text longer than the budget gets a batch of its own.
func (m *Model) planBatches(t *tower, inputs []string, missing []int) ([][]int, error) {
	lengths := make(map[int]int, len(missing))
	for _, i := range missing {
		b, err := t.tok.EncodeBatch([]string{inputs[i]}, m.cfg.MaxLength)
		if err != nil {
			return nil, fmt.Errorf("model %s: tokenizing text %d: %w", m.cfg.Name, i, err)
		}
		lengths[i] = b.SeqLen
	}
	order := slices.Clone(missing)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(lengths[b], lengths[a]) })
	var batches [][]int
	for start := 0; start < len(order); {
		longest := max(lengths[order[start]], 1)
		end := start + 1
		for end < len(order) && end-start < m.opts.BatchSize && (end-start+1)*longest <= m.opts.BatchTokens {
			end++
		}
		batches = append(batches, order[start:end])
		start = end
	}
	return batches, nil
}

// embedTexts tokenizes one batch (prefixes already applied) and embeds it.
func (m *Model) embedTexts(t *tower, texts []string) ([][]float32, error) {
	b, err := t.tok.EncodeBatch(texts, m.cfg.MaxLength)
	if err != nil {
		return nil, fmt.Errorf("model %s: tokenizing %d texts: %w", m.cfg.Name, len(texts), err)
	}
	if err := b.validate(len(texts)); err != nil {
		return nil, fmt.Errorf("model %s: %w", m.cfg.Name, err)
	}
	return m.embedTokens(t, b)
}

// embedTokens runs a token batch through a tower and pools and normalises the output.
func (m *Model) embedTokens(t *tower, b TokenBatch) ([][]float32, error) {
	raw, err := t.sess.run(b)
	if err != nil {
		return nil, err
	}
	var vecs [][]float32
	switch m.cfg.Pooling {
	case PoolingCLS:
		vecs = poolCLS(raw, b.BatchSize, b.SeqLen, t.sess.dim)
	case PoolingMean:
		vecs = poolMean(raw, b.AttentionMask, b.BatchSize, b.SeqLen, t.sess.dim)
	default:
		vecs = make([][]float32, b.BatchSize)
		for i := range vecs {
			vecs[i] = raw[i*t.sess.dim : (i+1)*t.sess.dim : (i+1)*t.sess.dim]
		}
	}
	for i, v := range vecs {
		if err := checkFinite(v); err != nil {
			return nil, fmt.Errorf("model file %s: text %d of the batch: %w", t.sess.path, i, err)
		}
		if m.cfg.NormalizeEnabled() {
			if err := normalizeL2(v); err != nil {
				return nil, fmt.Errorf("model file %s: text %d of the batch: %w", t.sess.path, i, err)
			}
		}
	}
	return vecs, nil
}

// sanitize keeps a name usable as a folder name.
func sanitize(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}

// TowerInfo describes one tower of an opened model.
type TowerInfo struct {
	// Tower is TowerQuery or TowerDoc.
	Tower string
	// ModelFile and TokenizerFile are the paths of the tower's files.
	ModelFile, TokenizerFile string
	// ModelSHA256 is the sha256 of the ONNX file.
	ModelSHA256 string
	// Inputs are the ONNX inputs fed, Output the output pooled.
	Inputs []string
	Output string
	// TokenStates is true when the output is per token (pooled by cls or mean).
	TokenStates bool
	// Dim is the embedding size.
	Dim int
	// Prefix is prepended to the tower's texts.
	Prefix string
}

// Towers describes the opened towers, query first.
func (m *Model) Towers() []TowerInfo {
	var out []TowerInfo
	for _, name := range []string{TowerQuery, TowerDoc} {
		t := m.towers[name]
		if t == nil {
			continue
		}
		out = append(out, TowerInfo{
			Tower: name, ModelFile: t.sess.path, TokenizerFile: filepath.Join(m.dir, m.cfg.TowerTokenizer(name)),
			ModelSHA256: t.sess.sha256, Inputs: slices.Clone(t.sess.inputs), Output: t.sess.output,
			TokenStates: t.sess.outputRank == 3, Dim: t.sess.dim, Prefix: t.prefix,
		})
	}
	return out
}
