package encode

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/rated-dev/rated/internal/testassets"
)

// withInitializerInput is identityModel plus a graph input that is also an initializer (as
// ONNX IR < 4 exporters wrote weights) and a fixed dimension: ONNX Runtime does not list such an
// input, and reports the fixed dimension as is.
func withInitializerInput() []byte {
	node := pbCat(pbBytes(1, []byte("input_ids")), pbBytes(2, []byte("out")), pbBytes(4, []byte("Identity")))
	fixed := pbCat(pbBytes(1, pbInt(1, 3)), pbBytes(1, pbBytes(2, []byte("seq"))))
	weight := pbCat(pbBytes(1, []byte("w")), pbBytes(2, pbBytes(1, pbCat(pbInt(1, 1), pbBytes(2, pbBytes(1, pbInt(1, 2)))))))
	init := pbCat(pbInt(1, 2), pbInt(2, 1), pbBytes(8, []byte("w")), pbBytes(9, make([]byte, 8))) // dims [2], FLOAT, name w, raw_data
	graph := pbCat(pbBytes(1, node), pbBytes(2, []byte("g")), pbBytes(5, init),
		pbBytes(11, pbCat(pbBytes(1, []byte("input_ids")), pbBytes(2, pbBytes(1, pbCat(pbInt(1, 7), pbBytes(2, fixed)))))),
		pbBytes(11, weight),
		pbBytes(12, pbCat(pbBytes(1, []byte("out")), pbBytes(2, pbBytes(1, pbCat(pbInt(1, 7), pbBytes(2, fixed)))))))
	return pbCat(pbInt(1, 3), pbBytes(7, graph), pbBytes(8, pbInt(2, 11)))
}

// TestONNXInfoMatchesOnnxRuntime compares the inputs and outputs read from the protobuf with
// those ONNX Runtime reports after building a session (its GetInputOutputInfo), on the
// installed encoders and on hand-built models.
func TestONNXInfoMatchesOnnxRuntime(t *testing.T) {
	sharedRuntime(t)
	models := map[string][]byte{
		"identity int64":          identityModel("input_ids", "out", 7),
		"identity float":          identityModel("x", "y", 1),
		"initializer among input": withInitializerInput(),
	}
	for _, rm := range referenceModels {
		data, err := os.ReadFile(filepath.Join(testassets.Model(t, rm.name), "model.onnx"))
		if err != nil {
			t.Fatal(err)
		}
		models[rm.name] = data
	}
	for name, data := range models {
		t.Run(name, func(t *testing.T) {
			wantIn, wantOut, err := ort.GetInputOutputInfoWithONNXData(data)
			if err != nil {
				t.Fatalf("onnxruntime: %v", err)
			}
			gotIn, gotOut, err := onnxInputsOutputs(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what      string
				got, want []ort.InputOutputInfo
			}{{"inputs", gotIn, wantIn}, {"outputs", gotOut, wantOut}} {
				if len(c.got) != len(c.want) {
					t.Fatalf("%s: %v, onnxruntime reports %v", c.what, c.got, c.want)
				}
				for i := range c.got {
					g, w := c.got[i], c.want[i]
					if g.Name != w.Name || g.DataType != w.DataType || g.OrtValueType != w.OrtValueType || !slices.Equal(g.Dimensions, w.Dimensions) {
						t.Errorf("%s[%d] = %s, onnxruntime reports %s", c.what, i, g.String(), w.String())
					}
				}
			}
		})
	}
}

// TestONNXInfoRejectsMalformed checks truncated and non-protobuf data give errors.
func TestONNXInfoRejectsMalformed(t *testing.T) {
	good := identityModel("input_ids", "out", 7)
	for name, data := range map[string][]byte{
		"text":      []byte("this is not a protobuf \x00\xff\xfe"),
		"truncated": good[:len(good)-5],
		"no graph":  pbInt(1, 8),
		"no output": pbBytes(7, pbBytes(11, onnxValueInfo("input_ids", 7, "b", "s"))),
		"nameless":  pbBytes(7, pbBytes(12, pbBytes(2, nil))),
	} {
		if _, _, err := onnxInputsOutputs(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzONNXInfo checks the protobuf reader never panics or loops on arbitrary bytes, and that
// whatever it accepts has named values.
func FuzzONNXInfo(f *testing.F) {
	f.Add(identityModel("input_ids", "out", 7))
	f.Add(withInitializerInput())
	f.Add([]byte("this is not a protobuf"))
	f.Add(pbBytes(7, pbBytes(12, onnxValueInfo("y", 1, "b"))))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, out, err := onnxInputsOutputs(data)
		if err != nil {
			return
		}
		if len(out) == 0 {
			t.Fatal("accepted a graph without outputs")
		}
		for _, v := range append(in, out...) {
			if v.Name == "" {
				t.Fatal("accepted a nameless value")
			}
		}
	})
}
