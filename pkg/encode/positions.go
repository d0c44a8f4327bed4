package encode

import (
	"fmt"
	"path/filepath"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// tensorProtoDims is TensorProto.dims (repeated int64, packed or not).
const tensorProtoDims = 1

// positionLimit returns the number of rows of the model's learned position-embedding table (an
// initializer named "…position_embeddings.weight" of rank 2, as in BERT, MiniLM and BGE exports):
// the longest token sequence the model accepts. It returns 0 when the model has no such table
// (rotary or relative positions, or weights renamed by an optimiser); rated then cannot check.
func positionLimit(model []byte) (int, error) {
	graph, err := onnxField(model, modelGraph)
	if err != nil {
		return 0, fmt.Errorf("ModelProto: %w", err)
	}
	limit := 0
	err = onnxFields(graph, func(num protowire.Number, tensor []byte) error {
		if num != graphInitializer || limit > 0 {
			return nil
		}
		name, dims, err := tensorNameDims(tensor)
		if err != nil {
			return fmt.Errorf("GraphProto initializer: %w", err)
		}
		if strings.HasSuffix(name, "position_embeddings.weight") && len(dims) == 2 {
			limit = int(dims[0])
		}
		return nil
	})
	return limit, err
}

// tensorNameDims reads the name and the shape of a TensorProto, skipping its data.
func tensorNameDims(msg []byte) (string, []int64, error) {
	var name string
	var dims []int64
	for b := msg; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == tensorProtoName && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			name, b = string(v), b[n:]
		case num == tensorProtoDims && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			dims, b = append(dims, int64(v)), b[n:]
		case num == tensorProtoDims && typ == protowire.BytesType: // packed
			packed, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			b = b[n:]
			for len(packed) > 0 {
				v, m := protowire.ConsumeVarint(packed)
				if m < 0 {
					return "", nil, protowire.ParseError(m)
				}
				dims, packed = append(dims, int64(v)), packed[m:]
			}
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return "", nil, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return name, dims, nil
}

// fitMaxLength checks max_length against the session's position table: a larger explicit value
// would load and then fail inside ONNX Runtime on the first long text, so it is refused naming
// both files; a defaulted one is lowered to the table.
func fitMaxLength(cfg *Config, dir string, s *session) error {
	if s.positions <= 0 || cfg.MaxLength <= s.positions {
		return nil
	}
	if cfg.maxLengthDefaulted {
		cfg.MaxLength = s.positions
		return nil
	}
	return fmt.Errorf("%s: max_length %d is more than the %d positions of %s's position-embedding table: set max_length to at most %d",
		filepath.Join(dir, ConfigFile), cfg.MaxLength, s.positions, s.path, s.positions)
}
