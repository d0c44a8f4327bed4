package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runFinetune(args ...string) error {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"finetune"}, args...))
	return cmd.Execute()
}

// TestFinetuneFlagErrors covers the checks made before any library or model is loaded.
func TestFinetuneFlagErrors(t *testing.T) {
	// Prebuilt artifacts for batch 4 while the flags ask for the default batch 8.
	art := t.TempDir()
	desc := `{"format":1,"towers":"shared","batch":4,"negatives":1,"seq":16,"tau":0.05,"pooling":"mean",
		"encoder_inputs":["input_ids","attention_mask"],"inputs":["input_ids","attention_mask","labels"],"output":"last_hidden_state","parameters":[]}`
	files := map[string]string{"artifacts.json": desc, "training_model.onnx": "", "eval_model.onnx": "", "optimizer_model.onnx": "", "checkpoint": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(art, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := []string{"--model", t.TempDir(), "--bench", t.TempDir(), "--out", filepath.Join(t.TempDir(), "out")}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no flags", nil, "--model, --bench and --out are required"},
		{"no out", []string{"--model", "m", "--bench", "b"}, "--model, --bench and --out are required"},
		{"cuda", append([]string{"--device", "cuda"}, dirs...), "only cpu is supported"},
		{"stale artifacts", append([]string{"--artifacts", art}, dirs...), "was built with batch 4, hard negatives 1, length 16"},
		{"missing artifacts", append([]string{"--artifacts", t.TempDir()}, dirs...), "artifacts.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runFinetune(c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}
