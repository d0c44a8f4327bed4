package train

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rated-dev/rated/internal/onnxproto"
)

// The ONNX file is walked with internal/onnxproto: replacing trained parameters needs only the
// initializers, and every other field is copied byte for byte, so the rest of the model (graph,
// shapes, opsets, metadata) stays exactly as it was.

// replaceInitializers returns the ModelProto model with the float initializers named in params
// replaced by the given values (as raw_data), and the names it replaced. Shapes must match.
func replaceInitializers(model []byte, params map[string][]float32) ([]byte, map[string]bool, error) {
	fields, err := onnxproto.ParseFields(model)
	if err != nil {
		return nil, nil, fmt.Errorf("ModelProto: %w", err)
	}
	done := map[string]bool{}
	out := make([]byte, 0, len(model))
	for _, f := range fields {
		if f.Num != onnxproto.ModelGraphField || f.Type != onnxproto.WireBytes {
			out = append(out, f.Raw...)
			continue
		}
		graph, err := rewriteGraph(f.Data, params, done)
		if err != nil {
			return nil, nil, err
		}
		out = onnxproto.AppendBytesField(out, onnxproto.ModelGraphField, graph)
	}
	return out, done, nil
}

func rewriteGraph(graph []byte, params map[string][]float32, done map[string]bool) ([]byte, error) {
	fields, err := onnxproto.ParseFields(graph)
	if err != nil {
		return nil, fmt.Errorf("GraphProto: %w", err)
	}
	out := make([]byte, 0, len(graph))
	for _, f := range fields {
		if f.Num != onnxproto.GraphInitializerField || f.Type != onnxproto.WireBytes {
			out = append(out, f.Raw...)
			continue
		}
		tensor, err := rewriteTensor(f.Data, params, done)
		if err != nil {
			return nil, err
		}
		out = onnxproto.AppendBytesField(out, onnxproto.GraphInitializerField, tensor)
	}
	return out, nil
}

func rewriteTensor(tensor []byte, params map[string][]float32, done map[string]bool) ([]byte, error) {
	fields, err := onnxproto.ParseFields(tensor)
	if err != nil {
		return nil, fmt.Errorf("TensorProto: %w", err)
	}
	hdr, err := onnxproto.ParseTensor(fields)
	if err != nil {
		return nil, err
	}
	name, dataType, location, size := hdr.Name, hdr.DataType, hdr.Location, hdr.Size()
	values, ok := params[name]
	if !ok {
		return tensor, nil
	}
	switch {
	case dataType != onnxproto.Float:
		return nil, fmt.Errorf("initializer %s: data type %d, want float32", name, dataType)
	case location != 0:
		return nil, fmt.Errorf("initializer %s: external data is not supported", name)
	case int64(len(values)) != size:
		return nil, fmt.Errorf("initializer %s: %d trained values for %d elements", name, len(values), size)
	}
	out := make([]byte, 0, len(tensor))
	for _, f := range fields {
		if f.Num == onnxproto.TensorFloatDataField || f.Num == onnxproto.TensorRawDataField {
			continue
		}
		out = append(out, f.Raw...)
	}
	raw := make([]byte, 4*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	done[name] = true
	return onnxproto.AppendBytesField(out, onnxproto.TensorRawDataField, raw), nil
}
