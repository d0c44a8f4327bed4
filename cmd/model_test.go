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
	// The folder's name in a home that has it, as the other commands take it.
	cmd = newRootCmd()
	out.Reset()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"model", "info", filepath.Base(dir), "--home", filepath.Dir(filepath.Dir(dir)), "--lib", lib})
	if err := cmd.Execute(); err != nil || !strings.Contains(out.String(), "model:        all-minilm-l6-v2 ("+dir+")") {
		t.Errorf("by name: %v\n%s", err, out.String())
	}
}

// TestModelInterpolateCmd: the flags are checked before any file is read, and a base mixed with
// itself writes a folder named after --out whose rated.yaml records both sources and the shares.
func TestModelInterpolateCmd(t *testing.T) {
	run := func(args ...string) (string, error) {
		cmd := newRootCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(append([]string{"model", "interpolate"}, args...))
		err := cmd.Execute()
		return out.String(), err
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--tuned", "t", "--out", "o", "--alpha", "0.3"}, "--base is required"},
		{[]string{"--base", "b", "--out", "o", "--alpha", "0.3"}, "--tuned is required"},
		{[]string{"--base", "b", "--tuned", "t", "--alpha", "0.3"}, "--out is required"},
		{[]string{"--base", "b", "--tuned", "t", "--out", "o"}, "--alpha is required"},
		{[]string{"--base", "b", "--tuned", "t", "--out", "o", "--alpha-query", "0.4"}, "--alpha is required"},
		{[]string{"--base", "b", "--tuned", "t", "--out", "o", "--alpha", "NaN"}, "query tower's share NaN is not in [0, 1]"},
		{[]string{"--base", "b", "--tuned", "t", "--out", "o", "--alpha", "0.3", "--alpha-doc", "2"}, "doc tower's share 2 is not in [0, 1]"},
	}
	for _, c := range cases {
		if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
	base := testassets.Model(t, "all-minilm-l6-v2")
	out := filepath.Join(t.TempDir(), "minilm-mix")
	text, err := run("--base", base, "--tuned", base, "--out", out, "--alpha", "0.25")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "wrote "+out) {
		t.Errorf("output %q", text)
	}
	for _, f := range []string{"model.onnx", "tokenizer.json", "rated.yaml", "manifest.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the mix lacks %s: %v", f, err)
		}
	}
	if _, err := run("--base", base, "--tuned", out, "--out", out, "--alpha", "0.5"); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("--out = --tuned: error %v", err)
	}
	// The mix is a model folder too: an --out inside it stands for one inside any --base (and
	// keeps a broken check from writing into the shared test assets).
	if _, err := run("--base", out, "--tuned", out, "--out", filepath.Join(out, "mix"), "--alpha", "0.5"); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("--out inside --base: error %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(out, "rated.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "name: minilm-mix") || !strings.Contains(string(raw), "rated model interpolate: 0.75 × all-minilm-l6-v2 + 0.25 × all-minilm-l6-v2") {
		t.Errorf("rated.yaml:\n%s", raw)
	}
}
