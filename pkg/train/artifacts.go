// Package train fine-tunes text encoders with an in-batch InfoNCE loss (plus hard negatives)
// through ONNX Runtime's on-device training API: the training graph comes from
// scripts/train/build_artifacts.py; everything else (data, tokenization, batches, learning-rate
// schedule, steps, validation, checkpoints, export) is Go. See docs/FINETUNE.md.
package train

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Tower layouts of a training graph.
const (
	// TowersShared is one encoder for queries and documents, all rows in one batch.
	TowersShared = "shared"
	// TowersDual is two encoders (DRAGON-style) with their own parameters, prefixed "q." and "d.".
	TowersDual = "dual"
)

// Artifacts describes a training-artifact directory (artifacts.json beside training_model.onnx,
// eval_model.onnx, optimizer_model.onnx and checkpoint).
type Artifacts struct {
	// Dir is the directory the description was read from.
	Dir string `json:"-"`
	// Format is the description's version (1).
	Format int `json:"format"`
	// SourceModel is the model.onnx the graph was built from.
	SourceModel string `json:"source_model"`
	// Towers is TowersShared or TowersDual.
	Towers string `json:"towers"`
	// Batch is the number of queries per step (B); Negatives the hard negatives per query (N);
	// Seq the bound sequence length.
	Batch     int `json:"batch"`
	Negatives int `json:"negatives"`
	Seq       int `json:"seq"`
	// Tau is the InfoNCE temperature baked into the graph.
	Tau float64 `json:"tau"`
	// Pooling is "mean" or "cls".
	Pooling string `json:"pooling"`
	// EncoderInputs are the encoder's token inputs (input_ids, attention_mask[, token_type_ids]).
	EncoderInputs []string `json:"encoder_inputs"`
	// Inputs are the training graph's inputs in order, "labels" last.
	Inputs []string `json:"inputs"`
	// Output is the encoder output that is pooled.
	Output string `json:"output"`
	// Parameters are the trainable tensors (initializer names; "q."/"d." prefixed for dual).
	Parameters []string `json:"parameters"`
}

// LoadArtifacts reads dir/artifacts.json and checks that the model files are present.
func LoadArtifacts(dir string) (*Artifacts, error) {
	path := filepath.Join(dir, "artifacts.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("training artifacts %s: %w (build them with scripts/train/build_artifacts.py)", dir, err)
	}
	var a Artifacts
	if err := json.Unmarshal(data, &a); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a.Dir = dir
	switch {
	case a.Format != 1:
		return nil, fmt.Errorf("%s: format %d, want 1", path, a.Format)
	case a.Towers != TowersShared && a.Towers != TowersDual:
		return nil, fmt.Errorf("%s: towers %q, want %s or %s", path, a.Towers, TowersShared, TowersDual)
	case a.Batch < 1 || a.Seq < 1 || a.Negatives < 0:
		return nil, fmt.Errorf("%s: batch %d, negatives %d, seq %d out of range", path, a.Batch, a.Negatives, a.Seq)
	case a.Tau <= 0:
		return nil, fmt.Errorf("%s: tau %g must be positive", path, a.Tau)
	case len(a.Inputs) == 0 || a.Inputs[len(a.Inputs)-1] != "labels":
		return nil, fmt.Errorf("%s: inputs %v must end with labels", path, a.Inputs)
	}
	for _, in := range a.EncoderInputs {
		if in != "input_ids" && in != "attention_mask" && in != "token_type_ids" {
			return nil, fmt.Errorf("%s: encoder input %q is not one of input_ids, attention_mask, token_type_ids", path, in)
		}
	}
	for _, f := range []string{"training_model.onnx", "eval_model.onnx", "optimizer_model.onnx", "checkpoint"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, fmt.Errorf("training artifacts %s: %w", dir, err)
		}
	}
	return &a, nil
}

// Rows is the number of encoder rows one step feeds: B(2+N) for a shared encoder; for dual
// towers, B query rows and B(1+N) document rows.
func (a *Artifacts) Rows() (queryRows, docRows int) {
	return a.Batch, a.Batch * (1 + a.Negatives)
}

func (a *Artifacts) path(name string) string { return filepath.Join(a.Dir, name) }
