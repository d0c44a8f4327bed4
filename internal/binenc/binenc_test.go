package binenc

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestRoundTripAndLayout(t *testing.T) {
	w := NewWriter(nil)
	w.Uvarint(300)
	w.Int(-2)
	w.Bool(true)
	w.Float64(0.5)
	w.Float32s([]float32{1, -2})
	w.String("ab")
	// Hand-encoded: uvarint 300 = ac 02; zig-zag −2 = 3; true = 1; 0.5 = 0x3fe0… little-endian;
	// length 2, 1.0f = 00 00 80 3f, −2.0f = 00 00 00 c0; length 2, "ab".
	want := []byte{0xac, 0x02, 0x03, 0x01, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0x02, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0, 0x02, 'a', 'b'}
	if !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("encoding\n got %x\nwant %x", w.Bytes(), want)
	}
	r := NewReader(w.Bytes())
	if r.Uvarint() != 300 || r.Int() != -2 || !r.Bool() || r.Float64() != 0.5 {
		t.Fatal("scalars did not round-trip")
	}
	if f := r.Float32s(); len(f) != 2 || f[0] != 1 || f[1] != -2 {
		t.Fatalf("float32s = %v", f)
	}
	if r.String() != "ab" || r.End() != nil {
		t.Fatalf("string or end: %v", r.Err())
	}
}

func TestNaNPayloadIsExact(t *testing.T) {
	nan := math.Float64frombits(0x7ff8000000000123)
	w := NewWriter(nil)
	w.Float64s([]float64{nan, math.Inf(-1)})
	got := NewReader(w.Bytes()).Float64s()
	if math.Float64bits(got[0]) != 0x7ff8000000000123 || !math.IsInf(got[1], -1) {
		t.Fatalf("got %v", got)
	}
}

func TestTruncatedAndHostileInput(t *testing.T) {
	w := NewWriter(nil)
	w.Float64s([]float64{1, 2, 3})
	full := w.Bytes()
	for cut := 0; cut < len(full); cut++ {
		r := NewReader(full[:cut])
		r.Float64s()
		if !errors.Is(r.Err(), ErrTruncated) {
			t.Fatalf("cut at %d: err %v, want ErrTruncated", cut, r.Err())
		}
	}
	// A length of 2^62 must be refused before allocating.
	w = NewWriter(nil)
	w.Uvarint(1 << 62)
	r := NewReader(w.Bytes())
	if r.Float32s() != nil || r.Err() == nil {
		t.Fatal("huge length accepted")
	}
	if err := NewReader([]byte{2}).End(); err == nil {
		t.Fatal("trailing byte accepted")
	}
	if r := NewReader([]byte{7}); r.Bool() || r.Err() == nil {
		t.Fatal("bool byte 7 accepted")
	}
}

func FuzzReader(f *testing.F) {
	w := NewWriter(nil)
	w.Float64s([]float64{1, 2})
	w.String("tool")
	w.Float32s([]float32{0.5})
	f.Add(w.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data)
		r.Float64s()
		_ = r.String()
		r.Float32s()
		r.Bool()
		r.Int()
		_ = r.End()
	})
}
