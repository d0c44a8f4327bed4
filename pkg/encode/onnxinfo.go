package encode

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"
	"google.golang.org/protobuf/encoding/protowire"
)

// Field numbers of the ONNX protobuf messages read by onnxInputsOutputs (onnx/onnx.proto).
const (
	modelGraph         = 7  // ModelProto.graph
	graphInitializer   = 5  // GraphProto.initializer
	graphInput         = 11 // GraphProto.input
	graphOutput        = 12 // GraphProto.output
	tensorProtoName    = 8  // TensorProto.name
	valueInfoName      = 1  // ValueInfoProto.name
	valueInfoType      = 2  // ValueInfoProto.type
	typeTensor         = 1  // TypeProto.tensor_type
	typeSequence       = 4  // TypeProto.sequence_type
	typeMap            = 5  // TypeProto.map_type
	typeSparseTensor   = 8  // TypeProto.sparse_tensor_type
	typeOptional       = 9  // TypeProto.optional_type
	tensorTypeElemType = 1  // TypeProto.Tensor.elem_type
	tensorTypeShape    = 2  // TypeProto.Tensor.shape
	shapeDim           = 1  // TensorShapeProto.dim
	dimValue           = 1  // TensorShapeProto.Dimension.dim_value
)

// onnxInputsOutputs reads the graph inputs and outputs (name, element type, shape; -1 for a
// dynamic dimension) from a serialized ONNX ModelProto, as ONNX Runtime's session would report
// them, without building a session: ONNX Runtime's own GetInputOutputInfo builds a whole session
// (weights, graph optimisation) only to read them, and opening a model then cost two sessions.
// Graph inputs that are initializers (IR version < 4) are not inputs for ONNX Runtime and are
// dropped. Initializer payloads are skipped, not decoded. Shapes are the declared ones: where a
// declared dimension is symbolic, ONNX Runtime may report the value its shape inference finds,
// and then dim in rated.yaml supplies it.
func onnxInputsOutputs(data []byte) (inputs, outputs []ort.InputOutputInfo, err error) {
	graph, err := onnxField(data, modelGraph)
	if err != nil {
		return nil, nil, fmt.Errorf("ModelProto: %w", err)
	}
	if graph == nil {
		return nil, nil, errors.New("ModelProto has no graph")
	}
	initializers := map[string]bool{}
	for b := graph; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, fmt.Errorf("GraphProto: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return nil, nil, fmt.Errorf("GraphProto field %d: %w", num, protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		msg, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, nil, fmt.Errorf("GraphProto field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case graphInitializer:
			name, err := onnxField(msg, tensorProtoName)
			if err != nil {
				return nil, nil, fmt.Errorf("GraphProto initializer: %w", err)
			}
			initializers[string(name)] = true
		case graphInput, graphOutput:
			info, err := decodeValueInfo(msg)
			if err != nil {
				return nil, nil, fmt.Errorf("GraphProto value info: %w", err)
			}
			if num == graphInput {
				inputs = append(inputs, info)
			} else {
				outputs = append(outputs, info)
			}
		}
	}
	kept := inputs[:0]
	for _, in := range inputs {
		if !initializers[in.Name] {
			kept = append(kept, in)
		}
	}
	if len(outputs) == 0 {
		return nil, nil, errors.New("GraphProto has no outputs")
	}
	return kept, outputs, nil
}

// decodeValueInfo decodes a ValueInfoProto.
func decodeValueInfo(msg []byte) (ort.InputOutputInfo, error) {
	var info ort.InputOutputInfo
	err := onnxFields(msg, func(num protowire.Number, b []byte) error {
		switch num {
		case valueInfoName:
			info.Name = string(b)
		case valueInfoType:
			return onnxFields(b, func(num protowire.Number, b []byte) error {
				switch num {
				case typeTensor, typeSparseTensor:
					info.OrtValueType = ort.ONNXTypeTensor
					if num == typeSparseTensor {
						info.OrtValueType = ort.ONNXTypeSparseTensor
					}
					return onnxTensorType(b, &info)
				case typeSequence:
					info.OrtValueType = ort.ONNXTypeSequence
				case typeMap:
					info.OrtValueType = ort.ONNXTypeMap
				case typeOptional:
					info.OrtValueType = ort.ONNXTypeOptional
				}
				return nil
			})
		}
		return nil
	})
	if err == nil && info.Name == "" {
		err = errors.New("value without a name")
	}
	return info, err
}

// onnxTensorType decodes a TypeProto.Tensor: the element type (varint) and the shape.
func onnxTensorType(msg []byte, info *ort.InputOutputInfo) error {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == tensorTypeElemType && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			info.DataType = ort.TensorElementDataType(int32(v))
			b = b[n:]
		case num == tensorTypeShape && typ == protowire.BytesType:
			shape, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			dims := ort.Shape{}
			err := onnxFields(shape, func(num protowire.Number, dim []byte) error {
				if num != shapeDim {
					return nil
				}
				d := int64(-1) // dim_param (symbolic) or unset: dynamic, as ONNX Runtime reports it
				for c := dim; len(c) > 0; {
					num, typ, n := protowire.ConsumeTag(c)
					if n < 0 {
						return protowire.ParseError(n)
					}
					c = c[n:]
					if num == dimValue && typ == protowire.VarintType {
						v, n := protowire.ConsumeVarint(c)
						if n < 0 {
							return protowire.ParseError(n)
						}
						d = int64(v)
						c = c[n:]
						continue
					}
					if n = protowire.ConsumeFieldValue(num, typ, c); n < 0 {
						return protowire.ParseError(n)
					}
					c = c[n:]
				}
				dims = append(dims, d)
				return nil
			})
			if err != nil {
				return err
			}
			info.Dimensions = dims
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}

// onnxFields calls fn with the payload of every length-delimited field of msg, skipping the
// others; a malformed message is an error.
func onnxFields(msg []byte, fn func(num protowire.Number, payload []byte) error) error {
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		payload, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, payload); err != nil {
			return err
		}
	}
	return nil
}

// onnxField returns the payload of the last length-delimited field num of msg (protobuf's
// last-one-wins rule for a non-repeated field), nil when absent.
func onnxField(msg []byte, num protowire.Number) ([]byte, error) {
	var out []byte
	err := onnxFields(msg, func(n protowire.Number, b []byte) error {
		if n == num {
			out = b
		}
		return nil
	})
	return out, err
}
