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

// checkFineTune refuses a tuned model that was not trained from base: both must hold the same
// float initializers with the same sizes. It names the first initializer that differs.
func checkFineTune(base, tuned map[string][]float32) error {
	for _, n := range sortedNames(base) {
		if _, ok := tuned[n]; !ok {
			return fmt.Errorf("initializer %s is in the base model only", n)
		}
	}
	for _, n := range sortedNames(tuned) {
		b, ok := base[n]
		switch {
		case !ok:
			return fmt.Errorf("initializer %s is in the tuned model only", n)
		case len(b) != len(tuned[n]):
			return fmt.Errorf("initializer %s: %d values in the base model, %d in the tuned one", n, len(b), len(tuned[n]))
		}
	}
	return nil
}

func sortedNames(m map[string][]float32) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// interpolateInitializers returns, for every float initializer of tuned, (1−alpha)·base +
// alpha·tuned, after checkFineTune.
func interpolateInitializers(base, tuned map[string][]float32, alpha float64) (map[string][]float32, error) {
	if err := checkFineTune(base, tuned); err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(tuned))
	for n, t := range tuned {
		b := base[n]
		v := make([]float32, len(t))
		for i := range t {
			// In float64 so that alpha 0 and 1 give base and tuned exactly.
			v[i] = float32((1-alpha)*float64(b[i]) + alpha*float64(t[i]))
		}
		out[n] = v
	}
	return out, nil
}

// Shares are the tuned weights' shares of a mix, per tower: 0 keeps the base's weights, 1 takes
// the fine-tune's.
type Shares struct {
	Query, Doc float64
}

// Validate reports a share outside [0, 1] (NaN included), naming its tower.
func (a Shares) Validate() error {
	for _, t := range []struct {
		tower string
		v     float64
	}{{"query", a.Query}, {"doc", a.Doc}} {
		if math.IsNaN(t.v) || t.v < 0 || t.v > 1 {
			return fmt.Errorf("the %s tower's share %v is not in [0, 1]", t.tower, t.v)
		}
	}
	return nil
}

// InterpolateModel writes outDir, a model folder whose every float weight is (1−a)·base + a·tuned
// with a = alpha.Query in the query tower and alpha.Doc in the document tower: weight-space
// ensembling of a fine-tuned encoder with the one it started from (WiSE-FT, Wortsman et al.,
// CVPR 2022), which keeps much of the frozen encoder's robustness off the fine-tuning
// distribution. baseDir is the model folder fine-tuning started from (one model.onnx for both
// towers); tunedDir is `rated finetune`'s output, one shared model or two towers. Equal shares of
// a shared fine-tune give one model.onnx; otherwise each tower is written (query_model.onnx,
// doc_model.onnx), so a doc share of 0 keeps the base's tool embeddings, and an index built with
// the base, as they are. A mixed tower is the base's ONNX graph with the mixed weights (a
// fine-tune exported by ExportModel has that same graph); tokenizer, pooling and prefixes come
// from the tuned folder's rated.yaml.
func InterpolateModel(baseDir, tunedDir, outDir, name string, alpha Shares) error {
	if err := alpha.Validate(); err != nil {
		return fmt.Errorf("interpolate: %w", err)
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
	type tower struct {
		out, tuned string
		share      float64
	}
	var plan []tower
	cfg := *tunedCfg
	switch {
	case tunedCfg.Model != "" && alpha.Query == alpha.Doc:
		plan = []tower{{"model.onnx", tunedCfg.Model, alpha.Query}}
		cfg.Model, cfg.QueryModel, cfg.DocModel = "model.onnx", "", ""
	case tunedCfg.Model != "":
		plan = []tower{{"query_model.onnx", tunedCfg.Model, alpha.Query}, {"doc_model.onnx", tunedCfg.Model, alpha.Doc}}
		cfg.Model, cfg.QueryModel, cfg.DocModel = "", "query_model.onnx", "doc_model.onnx"
	default:
		plan = []tower{{"query_model.onnx", tunedCfg.QueryModel, alpha.Query}, {"doc_model.onnx", tunedCfg.DocModel, alpha.Doc}}
		cfg.Model, cfg.QueryModel, cfg.DocModel = "", "query_model.onnx", "doc_model.onnx"
	}
	var towers []towerFile
	for _, t := range plan {
		path := filepath.Join(tunedDir, t.tuned)
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("interpolate: %w", err)
		}
		tuned, err := floatInitializers(data)
		if err != nil {
			return fmt.Errorf("interpolate: %s: %w", path, err)
		}
		if err := checkFineTune(base, tuned); err != nil {
			return fmt.Errorf("interpolate: %s is not a fine-tune of %s: %w", path, filepath.Join(baseDir, baseCfg.Model), err)
		}
		// A share of 0 or 1 copies the base's or the fine-tune's file byte for byte: the same
		// weights, and the same sha256, so embedding caches and indexes keyed by it still hold.
		switch t.share {
		case 0:
			towers = append(towers, towerFile{name: t.out, data: src})
			continue
		case 1:
			towers = append(towers, towerFile{name: t.out, data: data})
			continue
		}
		mixed, err := interpolateInitializers(base, tuned, t.share)
		if err != nil {
			return fmt.Errorf("interpolate %s: %w", t.out, err)
		}
		out, done, err := replaceInitializers(src, mixed)
		if err != nil {
			return fmt.Errorf("interpolate %s: %w", t.out, err)
		}
		if len(done) != len(mixed) {
			return fmt.Errorf("interpolate %s: %d of %d initializers written", t.out, len(done), len(mixed))
		}
		towers = append(towers, towerFile{name: t.out, data: out})
	}
	tok, err := os.ReadFile(filepath.Join(tunedDir, tunedCfg.TowerTokenizer(encode.TowerDoc)))
	if err != nil {
		return fmt.Errorf("interpolate: %w", err)
	}
	cfg.Name = name
	mix := func(a float64) string {
		return fmt.Sprintf("%.4g × %s + %.4g × %s", 1-a, baseCfg.Name, a, tunedCfg.Name)
	}
	if alpha.Query == alpha.Doc {
		cfg.Source.Package = "rated model interpolate: " + mix(alpha.Query)
	} else {
		cfg.Source.Package = "rated model interpolate: query tower " + mix(alpha.Query) + "; doc tower " + mix(alpha.Doc)
	}
	header := fmt.Sprintf("# Model folder for rated (docs/MODELS.md). Written by `rated model interpolate`\n"+
		"# (pkg/train): weights (1-a)*%s + a*%s, a = %g (query tower), %g (doc tower).\n", baseDir, tunedDir, alpha.Query, alpha.Doc)
	return writeModelFolder(cfg, outDir, towers, tok, header)
}
