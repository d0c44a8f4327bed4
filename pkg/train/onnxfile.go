package train

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The ONNX file is a protobuf ModelProto. Replacing trained parameters needs only three message
// levels, so they are walked with the wire format directly: ModelProto.graph (field 7) ->
// GraphProto.initializer (field 5, repeated TensorProto) -> TensorProto name (8), data_type (2),
// dims (1), float_data (4), raw_data (9), data_location (14). Every other field is copied byte
// for byte, so the rest of the model (graph, shapes, opsets, metadata) stays exactly as it was.
const (
	modelGraphField       = 7
	graphInitializerField = 5
	tensorDimsField       = 1
	tensorDataTypeField   = 2
	tensorFloatDataField  = 4
	tensorNameField       = 8
	tensorRawDataField    = 9
	tensorDataLocField    = 14
	onnxFloat             = 1
	wireVarint            = 0
	wireFixed64           = 1
	wireBytes             = 2
	wireFixed32           = 5
)

type protoField struct {
	num  uint64
	typ  uint64
	raw  []byte // the whole field, tag included
	data []byte // payload of a length-delimited field
	val  uint64 // value of a varint field
}

func parseFields(b []byte) ([]protoField, error) {
	var out []protoField
	for i := 0; i < len(b); {
		start := i
		tag, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return nil, fmt.Errorf("bad tag at byte %d", i)
		}
		i += n
		f := protoField{num: tag >> 3, typ: tag & 7}
		switch f.typ {
		case wireVarint:
			v, n := binary.Uvarint(b[i:])
			if n <= 0 {
				return nil, fmt.Errorf("bad varint at byte %d", i)
			}
			f.val = v
			i += n
		case wireFixed64:
			i += 8
		case wireFixed32:
			i += 4
		case wireBytes:
			l, n := binary.Uvarint(b[i:])
			if n <= 0 || uint64(len(b)-i-n) < l {
				return nil, fmt.Errorf("bad length at byte %d", i)
			}
			i += n
			f.data = b[i : i+int(l)]
			i += int(l)
		default:
			return nil, fmt.Errorf("unsupported wire type %d at byte %d", f.typ, start)
		}
		if i > len(b) {
			return nil, fmt.Errorf("field %d runs past the end", f.num)
		}
		f.raw = b[start:i]
		out = append(out, f)
	}
	return out, nil
}

func appendBytesField(dst []byte, num uint64, data []byte) []byte {
	dst = binary.AppendUvarint(dst, num<<3|wireBytes)
	dst = binary.AppendUvarint(dst, uint64(len(data)))
	return append(dst, data...)
}

// replaceInitializers returns the ModelProto model with the float initializers named in params
// replaced by the given values (as raw_data), and the names it replaced. Shapes must match.
func replaceInitializers(model []byte, params map[string][]float32) ([]byte, map[string]bool, error) {
	fields, err := parseFields(model)
	if err != nil {
		return nil, nil, fmt.Errorf("ModelProto: %w", err)
	}
	done := map[string]bool{}
	out := make([]byte, 0, len(model))
	for _, f := range fields {
		if f.num != modelGraphField || f.typ != wireBytes {
			out = append(out, f.raw...)
			continue
		}
		graph, err := rewriteGraph(f.data, params, done)
		if err != nil {
			return nil, nil, err
		}
		out = appendBytesField(out, modelGraphField, graph)
	}
	return out, done, nil
}

func rewriteGraph(graph []byte, params map[string][]float32, done map[string]bool) ([]byte, error) {
	fields, err := parseFields(graph)
	if err != nil {
		return nil, fmt.Errorf("GraphProto: %w", err)
	}
	out := make([]byte, 0, len(graph))
	for _, f := range fields {
		if f.num != graphInitializerField || f.typ != wireBytes {
			out = append(out, f.raw...)
			continue
		}
		tensor, err := rewriteTensor(f.data, params, done)
		if err != nil {
			return nil, err
		}
		out = appendBytesField(out, graphInitializerField, tensor)
	}
	return out, nil
}

func rewriteTensor(tensor []byte, params map[string][]float32, done map[string]bool) ([]byte, error) {
	fields, err := parseFields(tensor)
	if err != nil {
		return nil, fmt.Errorf("TensorProto: %w", err)
	}
	h, err := readTensorHeader(fields)
	if err != nil {
		return nil, err
	}
	name, dataType, location, size := h.name, h.dataType, h.location, h.size
	values, ok := params[name]
	if !ok {
		return tensor, nil
	}
	switch {
	case dataType != onnxFloat:
		return nil, fmt.Errorf("initializer %s: data type %d, want float32", name, dataType)
	case location != 0:
		return nil, fmt.Errorf("initializer %s: external data is not supported", name)
	case int64(len(values)) != size:
		return nil, fmt.Errorf("initializer %s: %d trained values for %d elements", name, len(values), size)
	}
	out := make([]byte, 0, len(tensor))
	for _, f := range fields {
		if f.num == tensorFloatDataField || f.num == tensorRawDataField {
			continue
		}
		out = append(out, f.raw...)
	}
	raw := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	done[name] = true
	return appendBytesField(out, tensorRawDataField, raw), nil
}

// tensorHeader is what a TensorProto says about its values: name, data type, where the data
// lives and the element count its dims give.
type tensorHeader struct {
	name               string
	dataType, location uint64
	size               int64
}

func readTensorHeader(fields []protoField) (tensorHeader, error) {
	h := tensorHeader{size: 1}
	for _, f := range fields {
		switch {
		case f.num == tensorNameField && f.typ == wireBytes:
			h.name = string(f.data)
		case f.num == tensorDataTypeField && f.typ == wireVarint:
			h.dataType = f.val
		case f.num == tensorDataLocField && f.typ == wireVarint:
			h.location = f.val
		case f.num == tensorDimsField && f.typ == wireVarint:
			h.size *= int64(f.val)
		case f.num == tensorDimsField && f.typ == wireBytes: // packed
			for b := f.data; len(b) > 0; {
				v, n := binary.Uvarint(b)
				if n <= 0 {
					return h, fmt.Errorf("initializer %s: bad dims", h.name)
				}
				h.size *= int64(v)
				b = b[n:]
			}
		}
	}
	return h, nil
}
