// Package binenc is the small binary codec of rated's durable state: policy snapshots
// (pkg/bandit) and the router's event records (pkg/router). Values are little-endian and
// fixed-size, lengths are uvarints, and every read is bounds-checked, so a torn or hostile record
// gives an error, never a panic or a huge allocation. One codec keeps both formats consistent.
package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Writer appends encoded values to a byte slice.
type Writer struct{ buf []byte }

// NewWriter returns a writer appending to buf (which may be nil).
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf} }

// Bytes returns the encoded bytes.
func (w *Writer) Bytes() []byte { return w.buf }

// Uvarint appends v as a uvarint.
func (w *Writer) Uvarint(v uint64) { w.buf = binary.AppendUvarint(w.buf, v) }

// Varint appends v as a zig-zag varint.
func (w *Writer) Varint(v int64) { w.buf = binary.AppendVarint(w.buf, v) }

// Int appends an int as a varint.
func (w *Writer) Int(v int) { w.Varint(int64(v)) }

// Bool appends one byte, 1 for true.
func (w *Writer) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	w.buf = append(w.buf, b)
}

// Float64 appends v as 8 little-endian bytes (exact, NaN payloads included).
func (w *Writer) Float64(v float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(v))
}

// Float64s appends the length and the values.
func (w *Writer) Float64s(v []float64) {
	w.Uvarint(uint64(len(v)))
	for _, x := range v {
		w.Float64(x)
	}
}

// Float32s appends the length and the values as 4 little-endian bytes each.
func (w *Writer) Float32s(v []float32) {
	w.Uvarint(uint64(len(v)))
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(x))
	}
}

// String appends the length and the bytes.
func (w *Writer) String(s string) {
	w.Uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// Raw appends the length and the bytes.
func (w *Writer) Raw(b []byte) {
	w.Uvarint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

// ErrTruncated is returned when the input ends inside a value.
var ErrTruncated = errors.New("binenc: truncated input")

// Reader decodes values; after the first error every read returns zero values and Err reports
// the error, so a decoder can read a whole structure and check once.
type Reader struct {
	buf []byte
	off int
	err error
}

// NewReader returns a reader over buf.
func NewReader(buf []byte) *Reader { return &Reader{buf: buf} }

// Err is the first decoding error.
func (r *Reader) Err() error { return r.err }

// Remaining is the number of bytes not read yet.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

// Fail records err (the first one wins) so that decoders can reject values that parse but make
// no sense.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Uvarint reads a uvarint.
func (r *Reader) Uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.Fail(fmt.Errorf("%w: bad uvarint at byte %d", ErrTruncated, r.off))
		return 0
	}
	r.off += n
	return v
}

// Varint reads a zig-zag varint.
func (r *Reader) Varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.buf[r.off:])
	if n <= 0 {
		r.Fail(fmt.Errorf("%w: bad varint at byte %d", ErrTruncated, r.off))
		return 0
	}
	r.off += n
	return v
}

// Int reads a varint that must fit an int.
func (r *Reader) Int() int {
	v := r.Varint()
	if int64(int(v)) != v {
		r.Fail(fmt.Errorf("binenc: integer %d out of range", v))
		return 0
	}
	return int(v)
}

// Bool reads one byte that must be 0 or 1.
func (r *Reader) Bool() bool {
	b := r.take(1)
	if b == nil {
		return false
	}
	if b[0] > 1 {
		r.Fail(fmt.Errorf("binenc: bool byte %d at byte %d", b[0], r.off-1))
		return false
	}
	return b[0] == 1
}

// Float64 reads 8 bytes.
func (r *Reader) Float64() float64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// Len reads a length and checks that at least length×unit bytes remain, so a corrupt length
// never causes a huge allocation.
func (r *Reader) Len(unit int) int {
	n := r.Uvarint()
	if r.err != nil {
		return 0
	}
	if unit < 1 {
		unit = 1
	}
	if n > uint64(r.Remaining()/unit) {
		r.Fail(fmt.Errorf("%w: length %d at byte %d exceeds the %d bytes left", ErrTruncated, n, r.off, r.Remaining()))
		return 0
	}
	return int(n)
}

// Float64s reads a length-prefixed slice (nil when empty).
func (r *Reader) Float64s() []float64 {
	n := r.Len(8)
	if n == 0 {
		return nil
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = r.Float64()
	}
	return out
}

// Float32s reads a length-prefixed slice (nil when empty).
func (r *Reader) Float32s() []float32 {
	n := r.Len(4)
	if n == 0 {
		return nil
	}
	b := r.take(4 * n)
	if b == nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// String reads a length-prefixed string.
func (r *Reader) String() string { return string(r.Raw()) }

// Raw reads a length-prefixed byte slice (a copy).
func (r *Reader) Raw() []byte {
	n := r.Len(1)
	b := r.take(n)
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > r.Remaining() {
		r.Fail(fmt.Errorf("%w: %d bytes wanted at byte %d, %d left", ErrTruncated, n, r.off, r.Remaining()))
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

// End fails unless every byte was read: trailing bytes mean a format mismatch.
func (r *Reader) End() error {
	if r.err == nil && r.Remaining() != 0 {
		r.Fail(fmt.Errorf("binenc: %d trailing bytes", r.Remaining()))
	}
	return r.err
}
