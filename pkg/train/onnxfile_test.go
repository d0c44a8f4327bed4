package train

import (
	"bytes"
	"strings"
	"testing"
)

// Hand-encoded protobuf pieces (tag = field<<3 | wire type).
func tensorBytes(name string, dims []byte, dataType byte, payload []byte) []byte {
	var t []byte
	t = append(t, 0x0a, byte(len(dims))) // dims (1), packed
	t = append(t, dims...)
	t = append(t, 0x10, dataType) // data_type (2)
	t = append(t, 0x42, byte(len(name)))
	t = append(t, name...) // name (8)
	t = append(t, payload...)
	return t
}

func wrap(field byte, data []byte) []byte { return append([]byte{field, byte(len(data))}, data...) }

func TestReplaceInitializers(t *testing.T) {
	// w: float [2] as packed float_data (field 4) = 1.0, 2.0; c: float [1] kept as it is.
	w := tensorBytes("w", []byte{2}, 1, wrap(0x22, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}))
	c := tensorBytes("c", []byte{1}, 1, wrap(0x4a, []byte{0, 0, 0x40, 0x40})) // raw_data 3.0
	graph := append(wrap(0x2a, w), wrap(0x2a, c)...)                          // initializer (5)
	graph = append([]byte{0x0a, 1, 'n'}, graph...)                            // node (1), opaque here
	model := append([]byte{0x08, 8}, wrap(0x3a, graph)...)                    // ir_version 8, graph (7)

	got, done, err := replaceInitializers(model, map[string][]float32{"w": {0.5, -1}})
	if err != nil {
		t.Fatal(err)
	}
	if !done["w"] || len(done) != 1 {
		t.Fatalf("replaced %v, want only w", done)
	}
	// w loses float_data and gains raw_data 0.5 (0x3f000000), -1 (0xbf800000), little-endian.
	w2 := tensorBytes("w", []byte{2}, 1, wrap(0x4a, []byte{0, 0, 0, 0x3f, 0, 0, 0x80, 0xbf}))
	graph2 := append([]byte{0x0a, 1, 'n'}, append(wrap(0x2a, w2), wrap(0x2a, c)...)...)
	want := append([]byte{0x08, 8}, wrap(0x3a, graph2)...)
	if !bytes.Equal(got, want) {
		t.Errorf("model bytes\n got %x\nwant %x", got, want)
	}

	cases := []struct {
		params map[string][]float32
		err    string
	}{
		{map[string][]float32{"w": {1, 2, 3}}, "3 trained values for 2 elements"},
	}
	for _, tc := range cases {
		if _, _, err := replaceInitializers(model, tc.params); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("params %v: error %v, want %q", tc.params, err, tc.err)
		}
	}
	i64 := append([]byte{0x08, 8}, wrap(0x3a, wrap(0x2a, tensorBytes("w", []byte{2}, 7, nil)))...)
	if _, _, err := replaceInitializers(i64, map[string][]float32{"w": {1, 2}}); err == nil || !strings.Contains(err.Error(), "want float32") {
		t.Errorf("int64 initializer: error %v", err)
	}
	if _, _, err := replaceInitializers([]byte{0x3a, 9, 1}, nil); err == nil {
		t.Error("truncated model: no error")
	}
}
