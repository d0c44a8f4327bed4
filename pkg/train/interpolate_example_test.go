package train

import (
	"fmt"
	"os"
	"path/filepath"
)

// A fine-tune mixed with its base at A = 1/4: every float weight becomes 3/4 of the base's plus
// 1/4 of the fine-tune's. The two folders here hold a one-initializer ONNX file each (w = [1, 2]
// in the base, [3, -2] after fine-tuning), enough to show the arithmetic.
func ExampleInterpolateModel() {
	dir, err := os.MkdirTemp("", "interpolate-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	folder := func(name string, w []byte) string {
		d := filepath.Join(dir, name)
		tensor := tensorBytes("w", []byte{2}, 1, wrap(0x4a, w)) // raw_data, little-endian float32
		model := append([]byte{0x08, 8}, wrap(0x3a, wrap(0x2a, tensor))...)
		yaml := "name: " + name + "\nmodel: model.onnx\ntokenizer: tokenizer.json\npooling: mean\ndim: 2\n"
		for f, data := range map[string][]byte{"model.onnx": model, "tokenizer.json": []byte("{}"), "rated.yaml": []byte(yaml)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				panic(err)
			}
			if err := os.WriteFile(filepath.Join(d, f), data, 0o644); err != nil {
				panic(err)
			}
		}
		return d
	}
	base := folder("base", []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40})   // 1, 2
	tuned := folder("tuned", []byte{0, 0, 0x40, 0x40, 0, 0, 0, 0xc0}) // 3, -2
	out := filepath.Join(dir, "mix")
	if err := InterpolateModel(base, tuned, out, "mix", Shares{Query: 0.25, Doc: 0.25}); err != nil {
		panic(err)
	}
	data, err := os.ReadFile(filepath.Join(out, "model.onnx"))
	if err != nil {
		panic(err)
	}
	weights, err := floatInitializers(data)
	if err != nil {
		panic(err)
	}
	fmt.Println(weights["w"])
	// Output: [1.5 1]
}
