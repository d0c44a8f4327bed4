package encode

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onnxAttrInts encodes an int-list AttributeProto (type INTS = 7); onnxAttrInt an int (INT = 2).
func onnxAttrInts(name string, v ...uint64) []byte {
	b := pbBytes(1, []byte(name))
	for _, x := range v {
		b = append(b, pbInt(8, x)...)
	}
	return append(b, pbInt(20, 7)...)
}

func onnxAttrInt(name string, v uint64) []byte {
	return pbCat(pbBytes(1, []byte(name)), pbInt(3, v), pbInt(20, 2))
}

func onnxNode(op string, ins, outs []string, attrs ...[]byte) []byte {
	var b []byte
	for _, in := range ins {
		b = append(b, pbBytes(1, []byte(in))...)
	}
	for _, out := range outs {
		b = append(b, pbBytes(2, []byte(out))...)
	}
	b = append(b, pbBytes(4, []byte(op))...)
	for _, a := range attrs {
		b = append(b, pbBytes(5, a)...)
	}
	return b
}

// sumSecondSegmentModel is a stand-in cross-encoder (opset 11): logits[b] = Σ_t input_ids[b,t] *
// token_type_ids[b,t], i.e. the sum of the second segment's ids, as a [batch, 1] float tensor.
func sumSecondSegmentModel() []byte {
	graph := pbCat(
		pbBytes(1, onnxNode("Cast", []string{"input_ids"}, []string{"ids_f"}, onnxAttrInt("to", 1))),
		pbBytes(1, onnxNode("Cast", []string{"token_type_ids"}, []string{"types_f"}, onnxAttrInt("to", 1))),
		pbBytes(1, onnxNode("Mul", []string{"ids_f", "types_f"}, []string{"prod"})),
		pbBytes(1, onnxNode("ReduceSum", []string{"prod"}, []string{"logits"}, onnxAttrInts("axes", 1), onnxAttrInt("keepdims", 1))),
		pbBytes(2, []byte("cross")),
		pbBytes(11, onnxValueInfo("input_ids", 7, "batch", "seq")),
		pbBytes(11, onnxValueInfo("attention_mask", 7, "batch", "seq")),
		pbBytes(11, onnxValueInfo("token_type_ids", 7, "batch", "seq")),
		pbBytes(12, onnxValueInfo("logits", 1, "batch", "one")),
	)
	return pbCat(pbInt(1, 7), pbBytes(7, graph), pbBytes(8, pbInt(2, 11)))
}

// wordLenPairs is a test pair tokenizer: a word's id is 1000 + its length; pairs are laid out
// as [CLS]=101 first [SEP]=102 second [SEP]=102, types 0 then 1, padded with 0.
type wordLenPairs struct{}

func (wordLenPairs) EncodeBatch([]string, int) (TokenBatch, error) { panic("single texts unused") }

func (wordLenPairs) EncodePairBatch(first, second []string, maxLen int) (TokenBatch, error) {
	var rows [][2][]int64
	for i := range first {
		ids, types := []int64{101}, []int64{0}
		for _, w := range strings.Fields(first[i]) {
			ids, types = append(ids, int64(1000+len(w))), append(types, 0)
		}
		ids, types = append(ids, 102), append(types, 0)
		for _, w := range strings.Fields(second[i]) {
			ids, types = append(ids, int64(1000+len(w))), append(types, 1)
		}
		ids, types = append(ids, 102), append(types, 1)
		rows = append(rows, [2][]int64{ids, types})
	}
	return padBatch(rows), nil
}

func TestCrossEncoderScores(t *testing.T) {
	rt := sharedRuntime(t)
	dir := t.TempDir()
	yaml := "kind: cross-encoder\nmodel: model.onnx\ntokenizer: tokenizer.json\noutput: logits\ndoc_prefix: \"doc \"\n"
	for name, data := range map[string][]byte{ConfigFile: []byte(yaml), "model.onnx": sumSecondSegmentModel(), "tokenizer.json": []byte("{}")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ce, err := OpenCrossEncoder(dir, Options{Runtime: rt, BatchSize: 2, LoadTokenizer: func(string) (Tokenizer, error) { return wordLenPairs{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer ce.Close()
	// Each score: "doc" (1003) + the doc's words + the final [SEP] (102); the query never counts.
	got, err := ce.Score("a long query", []string{"ab cde", "", "x y z w", "abcdefgh"})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1003 + 1002 + 1003 + 102, 1003 + 102, 1003 + 4*1001 + 102, 1003 + 1008 + 102}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-3 {
			t.Fatalf("Score = %v, want %v", got, want)
		}
	}
	// A bi-encoder folder is refused, and vice versa.
	if _, err := Open(dir, Options{Runtime: rt, LoadTokenizer: noTokenizer}); err == nil || !strings.Contains(err.Error(), "not an embedding model") {
		t.Errorf("Open on a cross-encoder: error %v", err)
	}
	if _, err := OpenCrossEncoder(filepath.Dir(filepath.Join(dir, "x")), Options{Runtime: rt, LoadTokenizer: noTokenizer}); err == nil || !strings.Contains(err.Error(), "cannot encode pairs") {
		t.Errorf("single-text tokenizer: error %v", err)
	}
}
