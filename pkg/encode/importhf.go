package encode

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// HFModel is what ReadHFFolder found in a Hugging Face / sentence-transformers folder with an ONNX
// export: the files rated runs and the settings a model folder's rated.yaml needs.
type HFModel struct {
	// ONNX and Tokenizer are the files' paths inside the folder.
	ONNX, Tokenizer string
	// Pooling is PoolingCLS or PoolingMean (from the Pooling module's config).
	Pooling string
	// Normalize says modules.json ends in a Normalize module.
	Normalize bool
	// MaxLength is sentence_bert_config.json's max_seq_length, else config.json's
	// max_position_embeddings capped at 512.
	MaxLength int
	// Dim is the Pooling module's word_embedding_dimension, else config.json's hidden_size.
	Dim int
	// QueryPrefix and DocPrefix are config_sentence_transformers.json's prompts "query" and
	// "document"/"passage" (often empty: many models document their instruction elsewhere).
	QueryPrefix, DocPrefix string
	// Upstream is config.json's _name_or_path, when present.
	Upstream string
	// ModelType is config.json's model_type (bert, …).
	ModelType string
}

// stModule is one entry of modules.json.
type stModule struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// ReadHFFolder reads a Hugging Face / sentence-transformers model folder with an ONNX export:
// config.json, tokenizer.json, modules.json (Transformer, Pooling, optionally Normalize), the
// Pooling module's config.json (1_Pooling/config.json), sentence_bert_config.json when present,
// and the ONNX file onnxFile (default: model.onnx, else onnx/model.onnx). Every error names the
// file and the field. Nothing is loaded into ONNX Runtime here.
func ReadHFFolder(fsys fs.FS, onnxFile string) (*HFModel, error) {
	m := &HFModel{Tokenizer: "tokenizer.json"}
	var cfg struct {
		ModelType             string `json:"model_type"`
		HiddenSize            int    `json:"hidden_size"`
		MaxPositionEmbeddings int    `json:"max_position_embeddings"`
		NameOrPath            string `json:"_name_or_path"`
	}
	if err := readJSON(fsys, "config.json", &cfg); err != nil {
		return nil, err
	}
	m.ModelType, m.Upstream = cfg.ModelType, cfg.NameOrPath
	if _, err := fs.Stat(fsys, m.Tokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w (rated reads a Hugging Face fast-tokenizer file)", err)
	}
	var err error
	if m.ONNX, err = findONNX(fsys, onnxFile); err != nil {
		return nil, err
	}
	var modules []stModule
	if err := readJSON(fsys, "modules.json", &modules); err != nil {
		return nil, err
	}
	poolingDir, err := checkModules(modules)
	if err != nil {
		return nil, err
	}
	m.Normalize = strings.HasSuffix(modules[len(modules)-1].Type, ".Normalize")
	poolingFile := path.Join(poolingDir, "config.json")
	var pool map[string]any
	if err := readJSON(fsys, poolingFile, &pool); err != nil {
		return nil, err
	}
	if m.Pooling, err = poolingMode(pool); err != nil {
		return nil, fmt.Errorf("%s: %w", poolingFile, err)
	}
	if d, ok := pool["word_embedding_dimension"].(float64); ok {
		if d != float64(int(d)) || d <= 0 || d > 1<<20 {
			return nil, fmt.Errorf("%s: word_embedding_dimension = %v: want a positive whole number", poolingFile, d)
		}
		m.Dim = int(d)
	}
	if m.Dim == 0 {
		m.Dim = cfg.HiddenSize
	}
	if m.Dim <= 0 {
		return nil, fmt.Errorf("%s: no word_embedding_dimension, and config.json has no hidden_size", poolingFile)
	}
	var sb struct {
		MaxSeqLength int `json:"max_seq_length"`
	}
	if err := readJSON(fsys, "sentence_bert_config.json", &sb); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m.MaxLength = sb.MaxSeqLength
	if m.MaxLength == 0 {
		m.MaxLength = min(cfg.MaxPositionEmbeddings, 512)
	}
	if m.MaxLength < 2 {
		return nil, fmt.Errorf("sentence_bert_config.json max_seq_length / config.json max_position_embeddings: %d tokens, want at least 2", m.MaxLength)
	}
	var st struct {
		Prompts map[string]string `json:"prompts"`
	}
	if err := readJSON(fsys, "config_sentence_transformers.json", &st); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m.QueryPrefix = st.Prompts["query"]
	m.DocPrefix = st.Prompts["document"]
	if m.DocPrefix == "" {
		m.DocPrefix = st.Prompts["passage"]
	}
	return m, nil
}

// readJSON decodes name from fsys into v; the error names the file (and wraps fs.ErrNotExist).
func readJSON(fsys fs.FS, name string, v any) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func findONNX(fsys fs.FS, onnxFile string) (string, error) {
	candidates := []string{"model.onnx", "onnx/model.onnx"}
	if onnxFile != "" {
		candidates = []string{filepath.ToSlash(onnxFile)}
	}
	for _, c := range candidates {
		st, err := fs.Stat(fsys, c)
		if err != nil {
			continue
		}
		if st.IsDir() || st.Size() == 0 {
			return "", fmt.Errorf("%s: not a non-empty file", c)
		}
		// Weights kept beside the graph (model.onnx_data) are not read: ONNX Runtime gets the
		// graph's bytes, so such a model would not load.
		for _, ext := range []string{"_data", ".data"} {
			if _, err := fs.Stat(fsys, c+ext); err == nil {
				return "", fmt.Errorf("%s: its weights are in the external file %s, which rated does not load; export with the weights inside the .onnx (models under 2 GB)", c, c+ext)
			}
		}
		return c, nil
	}
	return "", fmt.Errorf("no ONNX export: looked for %s (export one with optimum-cli export onnx, or name it with --onnx)", strings.Join(candidates, ", "))
}

// checkModules accepts Transformer, Pooling[, Normalize] and returns the Pooling module's folder.
func checkModules(modules []stModule) (string, error) {
	suffixes := []string{".Transformer", ".Pooling", ".Normalize"}
	if len(modules) < 2 || len(modules) > 3 {
		return "", fmt.Errorf("modules.json: %d modules; rated runs Transformer, Pooling and optionally Normalize", len(modules))
	}
	for i, mod := range modules {
		if !strings.HasSuffix(mod.Type, suffixes[i]) {
			return "", fmt.Errorf("modules.json: module %d is %q, want …%s (rated runs Transformer, Pooling and optionally Normalize; a Dense or other head is not supported)", i, mod.Type, suffixes[i])
		}
	}
	p := path.Clean(modules[1].Path)
	if p == "." || p == "" || strings.HasPrefix(p, "..") || path.IsAbs(p) {
		return "", fmt.Errorf("modules.json: Pooling module path %q: want a folder inside the model folder (1_Pooling)", modules[1].Path)
	}
	return p, nil
}

// poolingMode maps sentence-transformers' pooling flags to rated's pooling; exactly one of the
// supported modes (CLS token, mean of tokens) must be on, and no other.
func poolingMode(pool map[string]any) (string, error) {
	var on []string
	for k, v := range pool {
		if b, ok := v.(bool); ok && b && strings.HasPrefix(k, "pooling_mode_") {
			on = append(on, k)
		}
	}
	if len(on) != 1 {
		return "", fmt.Errorf("pooling modes %v: want exactly one of pooling_mode_cls_token, pooling_mode_mean_tokens", on)
	}
	switch on[0] {
	case "pooling_mode_cls_token":
		return PoolingCLS, nil
	case "pooling_mode_mean_tokens":
		return PoolingMean, nil
	}
	return "", fmt.Errorf("%s is not supported (rated pools by CLS token or mean of tokens)", on[0])
}

// ImportOptions name and place an imported model folder.
type ImportOptions struct {
	// Name is the model name and folder name (default: the source folder's name).
	Name string
	// ONNX is the ONNX file inside the source folder (default: model.onnx, else onnx/model.onnx).
	ONNX string
	// QueryPrefix and DocPrefix, when not nil, replace the prompts found in the folder.
	QueryPrefix, DocPrefix *string
}

var modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ImportHF turns the Hugging Face / sentence-transformers ONNX folder src (see ReadHFFolder)
// into the model folder modelsDir/<name>: model.onnx and tokenizer.json copied, and a rated.yaml
// recording the settings and the two files' sha256, which Open checks on every load. The folder
// appears whole or not at all (written beside, then renamed); an existing one is an error.
func ImportHF(src, modelsDir string, opts ImportOptions) (string, *Config, error) {
	hf, err := ReadHFFolder(os.DirFS(src), opts.ONNX)
	if err != nil {
		return "", nil, fmt.Errorf("model folder %s: %w", src, err)
	}
	name := opts.Name
	if name == "" {
		abs, err := filepath.Abs(src)
		if err != nil {
			return "", nil, err
		}
		name = filepath.Base(abs)
	}
	if !modelName.MatchString(name) {
		return "", nil, fmt.Errorf("model name %q: use letters, digits, '.', '_' and '-' (pass --name)", name)
	}
	dst := filepath.Join(modelsDir, name)
	if _, err := os.Stat(dst); err == nil {
		return "", nil, fmt.Errorf("%s already exists: remove it or import under another --name", dst)
	}
	if err := os.MkdirAll(modelsDir, 0o755); err != nil {
		return "", nil, err
	}
	tmp, err := os.MkdirTemp(modelsDir, "."+name+".import-")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", nil, err
	}
	modelSum, err := copyHashed(filepath.Join(src, filepath.FromSlash(hf.ONNX)), filepath.Join(tmp, "model.onnx"))
	if err != nil {
		return "", nil, err
	}
	tokSum, err := copyHashed(filepath.Join(src, hf.Tokenizer), filepath.Join(tmp, "tokenizer.json"))
	if err != nil {
		return "", nil, err
	}
	normalize := true
	cfg := Config{Name: name, Kind: KindBiEncoder, Model: "model.onnx", Tokenizer: "tokenizer.json", Towers: TowersBoth,
		Pooling: hf.Pooling, Normalize: &normalize, MaxLength: hf.MaxLength, QueryPrefix: hf.QueryPrefix, DocPrefix: hf.DocPrefix, Dim: hf.Dim,
		Source: Source{Package: "rated model import", Upstream: hf.Upstream, ModelSHA256: modelSum, TokenizerSHA256: tokSum}}
	if opts.QueryPrefix != nil {
		cfg.QueryPrefix = *opts.QueryPrefix
	}
	if opts.DocPrefix != nil {
		cfg.DocPrefix = *opts.DocPrefix
	}
	if cfg.Source.Upstream == "" {
		cfg.Source.Upstream = src
	}
	y, err := yaml.Marshal(&cfg)
	if err != nil {
		return "", nil, err
	}
	header := fmt.Sprintf("# Model folder for rated (docs/MODELS.md). Written by `rated model import` from %s\n# (%s, %s; modules.json Normalize: %v; rated normalises embeddings either way).\n", src, hf.ONNX, hf.ModelType, hf.Normalize)
	if err := os.WriteFile(filepath.Join(tmp, ConfigFile), append([]byte(header), y...), 0o644); err != nil {
		return "", nil, err
	}
	if _, err := LoadConfig(tmp); err != nil {
		return "", nil, fmt.Errorf("imported rated.yaml does not load: %w", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", nil, err
	}
	return dst, &cfg, nil
}

// copyHashed copies a file and returns the sha256 of what it wrote.
func copyHashed(from, to string) (string, error) {
	in, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Close()
		return "", fmt.Errorf("copying %s: %w", from, err)
	}
	if err := out.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
