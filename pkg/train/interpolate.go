package train

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/rated-dev/rated/pkg/encode"
)

// floatInitializers returns the float32 initializers of an ONNX ModelProto by name, read from
// raw_data or float_data (packed or not). Other data types are left out; external data is an
// error, since the values would not be in the file.
func floatInitializers(model []byte) (map[string][]float32, error) {
	fields, err := parseFields(model)
	if err != nil {
		return nil, fmt.Errorf("ModelProto: %w", err)
	}
	out := map[string][]float32{}
	for _, f := range fields {
		if f.num != modelGraphField || f.typ != wireBytes {
			continue
		}
		graph, err := parseFields(f.data)
		if err != nil {
			return nil, fmt.Errorf("GraphProto: %w", err)
		}
		for _, g := range graph {
			if g.num != graphInitializerField || g.typ != wireBytes {
				continue
			}
			name, values, err := readFloatTensor(g.data)
			if err != nil {
				return nil, err
			}
			if values != nil {
				out[name] = values
			}
		}
	}
	return out, nil
}

// readFloatTensor decodes one TensorProto; values is nil for a tensor that is not float32.
func readFloatTensor(tensor []byte) (name string, values []float32, err error) {
	fields, err := parseFields(tensor)
	if err != nil {
		return "", nil, fmt.Errorf("TensorProto: %w", err)
	}
	h, err := readTensorHeader(fields)
	if err != nil {
		return "", nil, err
	}
	name = h.name
	var raw []byte
	var floats []float32
	for _, f := range fields {
		switch {
		case f.num == tensorRawDataField && f.typ == wireBytes:
			raw = f.data
		case f.num == tensorFloatDataField && f.typ == wireBytes: // packed
			if len(f.data)%4 != 0 {
				return "", nil, fmt.Errorf("initializer %s: float_data of %d bytes", name, len(f.data))
			}
			for b := f.data; len(b) > 0; b = b[4:] {
				floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(b)))
			}
		case f.num == tensorFloatDataField && f.typ == wireFixed32:
			b := f.raw[len(f.raw)-4:]
			floats = append(floats, math.Float32frombits(binary.LittleEndian.Uint32(b)))
		}
	}
	if h.dataType != onnxFloat {
		return name, nil, nil
	}
	if h.location != 0 {
		return "", nil, fmt.Errorf("initializer %s: external data is not supported", name)
	}
	if raw != nil {
		if len(raw)%4 != 0 {
			return "", nil, fmt.Errorf("initializer %s: raw_data of %d bytes", name, len(raw))
		}
		floats = make([]float32, len(raw)/4)
		for i := range floats {
			floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	}
	if int64(len(floats)) != h.size {
		return "", nil, fmt.Errorf("initializer %s: %d values for %d elements", name, len(floats), h.size)
	}
	if floats == nil {
		floats = []float32{}
	}
	return name, floats, nil
}

// interpolateInitializers returns, for every float initializer of tuned, (1−alpha)·base +
// alpha·tuned. Both must hold the same float initializers with the same sizes: a tuned model
// that was not trained from base is refused, naming the first initializer that differs.
func interpolateInitializers(base, tuned map[string][]float32, alpha float64) (map[string][]float32, error) {
	names := make([]string, 0, len(tuned))
	for n := range tuned {
		names = append(names, n)
	}
	sort.Strings(names)
	for n := range base {
		if _, ok := tuned[n]; !ok {
			return nil, fmt.Errorf("initializer %s is in the base model only", n)
		}
	}
	out := make(map[string][]float32, len(tuned))
	for _, n := range names {
		b, ok := base[n]
		t := tuned[n]
		switch {
		case !ok:
			return nil, fmt.Errorf("initializer %s is in the tuned model only", n)
		case len(b) != len(t):
			return nil, fmt.Errorf("initializer %s: %d values in the base model, %d in the tuned one", n, len(b), len(t))
		}
		v := make([]float32, len(t))
		for i := range t {
			// In float64 so that alpha 0 and 1 give base and tuned exactly.
			v[i] = float32((1-alpha)*float64(b[i]) + alpha*float64(t[i]))
		}
		out[n] = v
	}
	return out, nil
}

// InterpolateModel writes outDir, a model folder whose every float weight is (1−alpha)·base +
// alpha·tuned: weight-space ensembling of a fine-tuned encoder with the one it started from
// (WiSE-FT, Wortsman et al., CVPR 2022), which keeps much of the frozen encoder's robustness off
// the fine-tuning distribution. baseDir is the model folder fine-tuning started from (one
// model.onnx for both towers); tunedDir is `rated finetune`'s output (shared, or two towers, each
// interpolated with the base). alpha 0 gives the base weights, 1 the tuned ones. The graph,
// tokenizer and pooling are the tuned folder's, which are the base's.
func InterpolateModel(baseDir, tunedDir, outDir, name string, alpha float64) error {
	if math.IsNaN(alpha) || alpha < 0 || alpha > 1 {
		return fmt.Errorf("interpolate: alpha %v is not in [0, 1]", alpha)
	}
	baseCfg, err := encode.LoadConfig(baseDir)
	if err != nil {
		return err
	}
	if baseCfg.Model == "" {
		return fmt.Errorf("interpolate: base %s has separate tower models; fine-tuning starts from one model.onnx", baseDir)
	}
	tunedCfg, err := encode.LoadConfig(tunedDir)
	if err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(baseDir, baseCfg.Model))
	if err != nil {
		return fmt.Errorf("interpolate: %w", err)
	}
	base, err := floatInitializers(src)
	if err != nil {
		return fmt.Errorf("interpolate: %s: %w", filepath.Join(baseDir, baseCfg.Model), err)
	}
	tunedFiles := []string{tunedCfg.Model}
	if tunedCfg.Model == "" {
		tunedFiles = []string{tunedCfg.QueryModel, tunedCfg.DocModel}
	}
	var towers []towerFile
	for _, f := range tunedFiles {
		path := filepath.Join(tunedDir, f)
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("interpolate: %w", err)
		}
		tuned, err := floatInitializers(data)
		if err != nil {
			return fmt.Errorf("interpolate: %s: %w", path, err)
		}
		mixed, err := interpolateInitializers(base, tuned, alpha)
		if err != nil {
			return fmt.Errorf("interpolate: %s is not a fine-tune of %s: %w", path, filepath.Join(baseDir, baseCfg.Model), err)
		}
		out, done, err := replaceInitializers(src, mixed)
		if err != nil {
			return fmt.Errorf("interpolate %s: %w", f, err)
		}
		if len(done) != len(mixed) {
			return fmt.Errorf("interpolate %s: %d of %d initializers written", f, len(done), len(mixed))
		}
		towers = append(towers, towerFile{name: f, data: out})
	}
	tok, err := os.ReadFile(filepath.Join(tunedDir, tunedCfg.TowerTokenizer(encode.TowerDoc)))
	if err != nil {
		return fmt.Errorf("interpolate: %w", err)
	}
	cfg := *tunedCfg
	cfg.Name = name
	cfg.Source.Package = fmt.Sprintf("rated model interpolate: %.4g × %s + %.4g × %s", 1-alpha, baseCfg.Name, alpha, tunedCfg.Name)
	header := fmt.Sprintf("# Model folder for rated (docs/MODELS.md). Written by `rated model interpolate`\n"+
		"# (pkg/train): weights (1-alpha)*%s + alpha*%s, alpha %g.\n", baseDir, tunedDir, alpha)
	return writeModelFolder(cfg, outDir, towers, tok, header)
}
