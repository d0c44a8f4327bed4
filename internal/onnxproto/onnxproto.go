// Package onnxproto walks the few levels of an ONNX file (a protobuf ModelProto) that rated
// needs, with the wire format directly: ModelProto.graph (field 7) -> GraphProto.initializer
// (field 5, repeated TensorProto) -> TensorProto name (8), data_type (2), dims (1), float_data
// (4), raw_data (9), data_location (14). pkg/train rewrites trained initializers with it;
// pkg/encode reads the size of a model's position-embedding table.
package onnxproto

import (
	"encoding/binary"
	"fmt"
)

// Field numbers of onnx.proto3 used here, and protobuf wire types.
const (
	ModelGraphField       = 7
	GraphInitializerField = 5
	TensorDimsField       = 1
	TensorDataTypeField   = 2
	TensorFloatDataField  = 4
	TensorNameField       = 8
	TensorRawDataField    = 9
	TensorDataLocField    = 14
	// Float is TensorProto.FLOAT.
	Float = 1

	WireVarint  = 0
	WireFixed64 = 1
	WireBytes   = 2
	WireFixed32 = 5
)

// Field is one top-level field of a protobuf message.
type Field struct {
	Num  uint64
	Type uint64
	Raw  []byte // the whole field, tag included
	Data []byte // payload of a length-delimited field
	Val  uint64 // value of a varint field
}

// ParseFields splits a protobuf message into its fields (sub-slices of b, not copies).
func ParseFields(b []byte) ([]Field, error) {
	var out []Field
	for i := 0; i < len(b); {
		start := i
		tag, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return nil, fmt.Errorf("bad tag at byte %d", i)
		}
		i += n
		f := Field{Num: tag >> 3, Type: tag & 7}
		switch f.Type {
		case WireVarint:
			v, n := binary.Uvarint(b[i:])
			if n <= 0 {
				return nil, fmt.Errorf("bad varint at byte %d", i)
			}
			f.Val = v
			i += n
		case WireFixed64:
			i += 8
		case WireFixed32:
			i += 4
		case WireBytes:
			l, n := binary.Uvarint(b[i:])
			if n <= 0 || uint64(len(b)-i-n) < l {
				return nil, fmt.Errorf("bad length at byte %d", i)
			}
			i += n
			f.Data = b[i : i+int(l)]
			i += int(l)
		default:
			return nil, fmt.Errorf("unsupported wire type %d at byte %d", f.Type, start)
		}
		if i > len(b) {
			return nil, fmt.Errorf("field %d runs past the end", f.Num)
		}
		f.Raw = b[start:i]
		out = append(out, f)
	}
	return out, nil
}

// AppendBytesField appends a length-delimited field to dst.
func AppendBytesField(dst []byte, num uint64, data []byte) []byte {
	dst = binary.AppendUvarint(dst, num<<3|WireBytes)
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// Tensor is the header of a TensorProto: its name, element type, storage location and shape.
type Tensor struct {
	Name     string
	DataType uint64
	Location uint64
	Dims     []int64
}

// Size is the number of elements (the product of Dims; 1 for a scalar).
func (t Tensor) Size() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// ParseTensor reads the header of a TensorProto from its fields.
func ParseTensor(fields []Field) (Tensor, error) {
	var t Tensor
	for _, f := range fields {
		switch {
		case f.Num == TensorNameField && f.Type == WireBytes:
			t.Name = string(f.Data)
		case f.Num == TensorDataTypeField && f.Type == WireVarint:
			t.DataType = f.Val
		case f.Num == TensorDataLocField && f.Type == WireVarint:
			t.Location = f.Val
		case f.Num == TensorDimsField && f.Type == WireVarint:
			t.Dims = append(t.Dims, int64(f.Val))
		case f.Num == TensorDimsField && f.Type == WireBytes: // packed
			for b := f.Data; len(b) > 0; {
				v, n := binary.Uvarint(b)
				if n <= 0 {
					return t, fmt.Errorf("initializer %s: bad dims", t.Name)
				}
				t.Dims = append(t.Dims, int64(v))
				b = b[n:]
			}
		}
	}
	return t, nil
}

// Initializers returns the headers of the graph's initializers (the model's weights), in file
// order.
func Initializers(model []byte) ([]Tensor, error) {
	fields, err := ParseFields(model)
	if err != nil {
		return nil, fmt.Errorf("ModelProto: %w", err)
	}
	var out []Tensor
	for _, f := range fields {
		if f.Num != ModelGraphField || f.Type != WireBytes {
			continue
		}
		graph, err := ParseFields(f.Data)
		if err != nil {
			return nil, fmt.Errorf("GraphProto: %w", err)
		}
		for _, g := range graph {
			if g.Num != GraphInitializerField || g.Type != WireBytes {
				continue
			}
			tf, err := ParseFields(g.Data)
			if err != nil {
				return nil, fmt.Errorf("TensorProto: %w", err)
			}
			t, err := ParseTensor(tf)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
	}
	return out, nil
}
