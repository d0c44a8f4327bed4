package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/home"
)

func TestModelList(t *testing.T) {
	h := home.Home{Dir: t.TempDir(), From: "test"}
	root := h.ModelsDir()
	write := func(dir, yaml string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if yaml != "" {
			if err := os.WriteFile(filepath.Join(root, dir, "rated.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("b-dual", "query_model: q.onnx\ndoc_model: d.onnx\ntokenizer: tokenizer.json\npooling: cls\ndim: 768\nsource:\n  package: hub\n")
	write("a-mean", "name: mini\nmodel: model.onnx\ntokenizer: tokenizer.json\npooling: mean\nmax_length: 256\n")
	write("c-broken", "model: m.onnx\ntokenizer: t.json\npooling: max\n")
	write("not-a-model", "")
	var out bytes.Buffer
	if err := listModels(&out, h); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want header + 3 models:\n%s", len(lines), out.String())
	}
	wantFields := [][]string{
		{"NAME", "KIND", "TOWERS", "POOLING", "DIM", "MAX_LEN", "SOURCE", "DIR"},
		{"mini", "bi-encoder", "both", "mean", "?", "256", "-", filepath.Join(root, "a-mean")},
		{"b-dual", "bi-encoder", "both", "cls", "768", "512", "hub", filepath.Join(root, "b-dual")},
	}
	for i, want := range wantFields {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d = %q, want fields %q", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[3], "c-broken") || !strings.Contains(lines[3], "(invalid)") || !strings.Contains(lines[3], `pooling "max"`) {
		t.Errorf("broken folder line %q", lines[3])
	}
	if err := listModels(&out, home.Home{Dir: filepath.Join(root, "missing")}); err == nil || !strings.Contains(err.Error(), "rated setup models") {
		t.Errorf("missing folder: error %v", err)
	}
}

func TestModelInfo(t *testing.T) {
	dir := testassets.Model(t, "all-minilm-l6-v2")
	lib := testassets.ORTLibrary(t)
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"model", "info", dir, "--lib", lib, "--encode", "find flights to Rome"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pooling:      mean", "onnxruntime:  1.", "query tower:", "doc tower:",
		"[input_ids attention_mask token_type_ids] -> output last_hidden_state", `doc embedding of "find flights to Rome": norm 1.000000`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
