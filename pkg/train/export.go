package train

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/encode"
)

// ExportModel writes a model folder that pkg/encode runs: the source folder's ONNX graph with the
// trained parameters in place of the originals (the graph, its dynamic shapes and outputs stay
// exactly as they were), its tokenizer.json and a rated.yaml naming this folder. A shared encoder
// gives model.onnx; dual towers give query_model.onnx and doc_model.onnx. srcDir must hold one
// model for both towers (the layout build_artifacts.py reads).
func ExportModel(params map[string][]float32, art *Artifacts, srcDir, outDir, name string) error {
	cfg, err := encode.LoadConfig(srcDir)
	if err != nil {
		return err
	}
	if cfg.Model == "" {
		return fmt.Errorf("export: %s has separate tower models; fine-tuning reads one model.onnx", srcDir)
	}
	src, err := os.ReadFile(filepath.Join(srcDir, cfg.Model))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	out := *cfg
	out.Name = name
	type file struct{ prefix, name string }
	var files []file
	if art.Towers == TowersShared {
		files = []file{{"", "model.onnx"}}
		out.Model, out.QueryModel, out.DocModel = "model.onnx", "", ""
	} else {
		files = []file{{"q.", "query_model.onnx"}, {"d.", "doc_model.onnx"}}
		out.Model, out.QueryModel, out.DocModel = "", "query_model.onnx", "doc_model.onnx"
	}
	var towers []towerFile
	for _, f := range files {
		tower := map[string][]float32{}
		for n, v := range params {
			if strings.HasPrefix(n, f.prefix) {
				tower[strings.TrimPrefix(n, f.prefix)] = v
			}
		}
		data, done, err := replaceInitializers(src, tower)
		if err != nil {
			return fmt.Errorf("export %s: %w", f.name, err)
		}
		if len(done) != len(tower) {
			var missing []string
			for n := range tower {
				if !done[n] {
					missing = append(missing, n)
				}
			}
			sort.Strings(missing)
			return fmt.Errorf("export %s: trained parameters not among the initializers of %s: %v", f.name, cfg.Model, missing)
		}
		towers = append(towers, towerFile{name: f.name, data: data})
	}
	tok, err := os.ReadFile(filepath.Join(srcDir, cfg.TowerTokenizer(encode.TowerDoc)))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	out.Source.Package = "rated finetune of " + cfg.Name + " (see TRAINING.md)"
	header := "# Model folder for rated (docs/MODELS.md). Written by `rated finetune` (pkg/train).\n"
	return writeModelFolder(out, outDir, towers, tok, header)
}

// towerFile is one ONNX file of a model folder being written.
type towerFile struct {
	name string
	data []byte
}

// writeModelFolder writes the tower files, tokenizer.json and a rated.yaml (cfg, with the
// written files' sha256 and the tokenizer file name filled in) into outDir, each file atomically.
// cfg names the tower files already: Model for one file, QueryModel and DocModel for two.
func writeModelFolder(cfg encode.Config, outDir string, towers []towerFile, tok []byte, header string) error {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return fmt.Errorf("write model folder: %w", err)
	}
	var sums []string
	for _, f := range towers {
		if err := atomicfile.WriteBytes(filepath.Join(outDir, f.name), f.data); err != nil {
			return fmt.Errorf("write model folder: %w", err)
		}
		sum := sha256.Sum256(f.data)
		sums = append(sums, hex.EncodeToString(sum[:]))
	}
	if err := atomicfile.WriteBytes(filepath.Join(outDir, "tokenizer.json"), tok); err != nil {
		return fmt.Errorf("write model folder: %w", err)
	}
	tsum := sha256.Sum256(tok)
	cfg.Tokenizer, cfg.QueryTokenizer, cfg.DocTokenizer = "tokenizer.json", "", ""
	cfg.Towers = encode.TowersBoth
	cfg.Source = encode.Source{
		Package:         cfg.Source.Package,
		Upstream:        cfg.Source.Upstream,
		ModelSHA256:     strings.Join(sums, " "),
		TokenizerSHA256: hex.EncodeToString(tsum[:]),
	}
	y, err := yaml.Marshal(&cfg)
	if err != nil {
		return fmt.Errorf("write model folder rated.yaml: %w", err)
	}
	return atomicfile.WriteBytes(filepath.Join(outDir, encode.ConfigFile), append([]byte(header), y...))
}
