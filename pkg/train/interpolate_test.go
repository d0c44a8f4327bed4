package train

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/encode"
)

// TestFloatInitializersByHand reads the three float encodings ONNX allows (raw_data, packed
// float_data, one fixed32 float_data field per value) from hand-encoded bytes and skips a
// non-float tensor.
func TestFloatInitializersByHand(t *testing.T) {
	packed := tensorBytes("w", []byte{2}, 1, wrap(0x22, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})) // 1, 2
	raw := tensorBytes("c", []byte{1}, 1, wrap(0x4a, []byte{0, 0, 0x40, 0x40}))                   // 3
	// float_data (4) unpacked: tag 4<<3|5 = 0x25, then 4 bytes each: -1, 0.5.
	fixed := tensorBytes("u", []byte{2}, 1, []byte{0x25, 0, 0, 0x80, 0xbf, 0x25, 0, 0, 0, 0x3f})
	ints := tensorBytes("i", []byte{1}, 7, wrap(0x4a, []byte{1, 0, 0, 0, 0, 0, 0, 0}))
	var graph []byte
	for _, tensor := range [][]byte{packed, raw, fixed, ints} {
		graph = append(graph, wrap(0x2a, tensor)...)
	}
	model := append([]byte{0x08, 8}, wrap(0x3a, graph)...)
	got, err := floatInitializers(model)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{"w": {1, 2}, "c": {3}, "u": {-1, 0.5}}
	if len(got) != len(want) {
		t.Fatalf("read %v, want %v", got, want)
	}
	for n, w := range want {
		if g := got[n]; len(g) != len(w) || g[0] != w[0] || g[len(g)-1] != w[len(w)-1] {
			t.Errorf("%s = %v, want %v", n, g, w)
		}
	}
	short := tensorBytes("w", []byte{3}, 1, wrap(0x4a, []byte{0, 0, 0x40, 0x40}))
	bad := append([]byte{0x08, 8}, wrap(0x3a, wrap(0x2a, short))...)
	if _, err := floatInitializers(bad); err == nil || !strings.Contains(err.Error(), "initializer w: 1 values for 3 elements") {
		t.Errorf("three dims, one value: error %v", err)
	}
}

// TestInterpolateInitializersByHand: (1−α)·base + α·tuned with α = 1/4, worked out by hand, and
// the refusals of a tuned model that was not trained from the base.
func TestInterpolateInitializersByHand(t *testing.T) {
	base := map[string][]float32{"w": {1, 2}, "c": {3}}
	tuned := map[string][]float32{"w": {3, -2}, "c": {5}}
	got, err := interpolateInitializers(base, tuned, 0.25)
	if err != nil {
		t.Fatal(err)
	}
	// w: 0.75·1 + 0.25·3 = 1.5, 0.75·2 + 0.25·(−2) = 1; c: 0.75·3 + 0.25·5 = 3.5.
	if w, c := got["w"], got["c"]; w[0] != 1.5 || w[1] != 1 || c[0] != 3.5 {
		t.Errorf("interpolated %v, want w [1.5 1], c [3.5]", got)
	}
	cases := []struct {
		tuned map[string][]float32
		err   string
	}{
		{map[string][]float32{"w": {3, -2}}, "initializer c is in the base model only"},
		{map[string][]float32{"w": {3, -2}, "c": {5}, "x": {1}}, "initializer x is in the tuned model only"},
		{map[string][]float32{"w": {3}, "c": {5}}, "initializer w: 2 values in the base model, 1 in the tuned one"},
	}
	for _, tc := range cases {
		if _, err := interpolateInitializers(base, tc.tuned, 0.5); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("tuned %v: error %v, want %q", tc.tuned, err, tc.err)
		}
	}
}

// TestInterpolateModel fine-tunes MiniLM for five steps, then checks the folders
// InterpolateModel writes with ONNX Runtime: alpha 0 embeds exactly as the base, alpha 1 exactly
// as the fine-tune, and alpha 1/2 holds the mean of their weights (every initializer).
func TestInterpolateModel(t *testing.T) {
	rt, ert := testRuntime(t)
	base := minilm(t)
	art := testArtifacts(t, "all-minilm-l6-v2-test")
	s, err := rt.OpenSession(art, "", SessionOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := assemble(t, art, base, fixedExamples[:art.Batch])
	for step := 0; step < 5; step++ {
		if _, err := s.TrainStep(b); err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(5e-5); err != nil {
			t.Fatal(err)
		}
	}
	params, err := s.Parameters()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tuned := filepath.Join(dir, "tuned")
	if err := ExportModel(params, art, base, tuned, "tuned"); err != nil {
		t.Fatal(err)
	}
	texts := []string{fixedExamples[0].Query, fixedExamples[1].Positive}
	embed := func(model string) [][]float32 { return embedDocs(t, ert, model, encode.DeviceCPU, texts) }
	same := func(a, b [][]float32) bool {
		for i := range a {
			for j := range a[i] {
				if a[i][j] != b[i][j] {
					return false
				}
			}
		}
		return true
	}
	for _, tc := range []struct {
		alpha float64
		want  string
	}{{0, base}, {1, tuned}} {
		out := filepath.Join(dir, "mix")
		if err := InterpolateModel(base, tuned, out, "mix", Shares{tc.alpha, tc.alpha}); err != nil {
			t.Fatal(err)
		}
		if !same(embed(out), embed(tc.want)) {
			t.Errorf("alpha %g does not embed as %s", tc.alpha, tc.want)
		}
	}
	if same(embed(base), embed(tuned)) {
		t.Fatal("five steps changed no embedding; the checks above prove nothing")
	}
	half := filepath.Join(dir, "half")
	if err := InterpolateModel(base, tuned, half, "half", Shares{0.5, 0.5}); err != nil {
		t.Fatal(err)
	}
	read := func(dir string) map[string][]float32 {
		data := mustRead(t, filepath.Join(dir, "model.onnx"))
		m, err := floatInitializers(data)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	b0, b1, mid := read(base), read(tuned), read(half)
	changed := 0
	for n, v := range mid {
		for i := range v {
			want := float32((float64(b0[n][i]) + float64(b1[n][i])) / 2)
			if v[i] != want {
				t.Fatalf("%s[%d] = %g, want the mean of %g and %g", n, i, v[i], b0[n][i], b1[n][i])
			}
			if b0[n][i] != b1[n][i] {
				changed++
			}
		}
	}
	if changed == 0 || len(mid) != len(b0) {
		t.Errorf("%d initializers (base %d), %d values differing between base and tune", len(mid), len(b0), changed)
	}
	if err := InterpolateModel(base, tuned, half, "half", Shares{0.5, 1.5}); err == nil || !strings.Contains(err.Error(), "the doc tower's share 1.5 is not in [0, 1]") {
		t.Errorf("alpha 1.5: error %v", err)
	}
	if err := InterpolateModel(testassets.Model(t, "bge-small-en-v1.5"), tuned, filepath.Join(dir, "x"), "x", Shares{0.5, 0.5}); err == nil || !strings.Contains(err.Error(), "is not a fine-tune of") {
		t.Errorf("another base: error %v", err)
	}

	// Per-tower shares from a shared fine-tune: two towers, the query tower as the fine-tune
	// embeds and the doc tower as the base does, bit for bit.
	split := filepath.Join(dir, "split")
	if err := InterpolateModel(base, tuned, split, "split", Shares{Query: 1, Doc: 0}); err != nil {
		t.Fatal(err)
	}
	q, d := embedQueries(t, ert, split, encode.DeviceCPU, texts), embedDocs(t, ert, split, encode.DeviceCPU, texts)
	if !same(q, embed(tuned)) || !same(d, embed(base)) {
		t.Error("query share 1, doc share 0: the towers do not embed as the fine-tune and the base")
	}
	// Shares 0 and 1 copy the files themselves, so anything keyed by their sha256 still matches.
	if !bytes.Equal(mustRead(t, filepath.Join(split, "doc_model.onnx")), mustRead(t, filepath.Join(base, "model.onnx"))) ||
		!bytes.Equal(mustRead(t, filepath.Join(split, "query_model.onnx")), mustRead(t, filepath.Join(tuned, "model.onnx"))) {
		t.Error("shares 0 and 1 did not copy the base's and the fine-tune's files")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
