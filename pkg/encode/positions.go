package encode

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rated-dev/rated/internal/onnxproto"
)

// positionLimit returns the number of rows of the model's learned position-embedding table (an
// initializer named "…position_embeddings.weight" of rank 2, as in BERT, MiniLM and BGE exports):
// the longest token sequence the model accepts. It returns 0 when the model has no such table
// (rotary or relative positions, or weights renamed by an optimiser); rated then cannot check.
func positionLimit(model []byte) (int, error) {
	inits, err := onnxproto.Initializers(model)
	if err != nil {
		return 0, err
	}
	for _, t := range inits {
		if strings.HasSuffix(t.Name, "position_embeddings.weight") && len(t.Dims) == 2 {
			return int(t.Dims[0]), nil
		}
	}
	return 0, nil
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
