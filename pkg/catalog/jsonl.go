package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/internal/jsonkeys"
	"github.com/rated-dev/rated/internal/textfile"
)

// toolType is the type the catalog's records decode into, for the key check.
var toolType = reflect.TypeOf(Tool{})

// ReadJSONL reads a catalog, one JSON Tool per line. Blank lines are skipped. A malformed line,
// a key repeated or in another case than its field's ("ID" for "id"), data after a line's
// record, a tool failing Validate, or a duplicate id is an error naming the file and line.
func ReadJSONL(path string) ([]Tool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	defer f.Close()
	return DecodeJSONL(f, path)
}

// DecodeJSONL is ReadJSONL over a reader; name is used in error messages.
func DecodeJSONL(r io.Reader, name string) ([]Tool, error) {
	var tools []Tool
	seen := map[string]int{}
	err := textfile.Lines(r, name, func(line int, b []byte) error {
		// Keys first: encoding/json would take "ID" for "id" and keep the last of a repeated key.
		var ke *jsonkeys.Error
		if err := jsonkeys.Check(json.NewDecoder(bytes.NewReader(b)), toolType, "a tool record"); errors.As(err, &ke) {
			return fmt.Errorf("malformed tool record: %w", ke)
		}
		var t Tool
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return fmt.Errorf("malformed tool record: %w", err)
		}
		// Decode reads one value: a second record or garbage after it on the same line
		// would otherwise be dropped without a word.
		if _, err := dec.Token(); err != io.EOF {
			return fmt.Errorf("data after the tool record (one record per line)")
		}
		if err := t.Validate(); err != nil {
			return err
		}
		if prev, dup := seen[t.ID]; dup {
			return fmt.Errorf("duplicate tool id %q (first on line %d)", t.ID, prev)
		}
		seen[t.ID] = line
		tools = append(tools, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tools, nil
}

// WriteJSONL atomically writes tools to path, one per line (EncodeJSONL).
func WriteJSONL(path string, tools []Tool) error {
	if err := atomicfile.Write(path, func(w io.Writer) error { return EncodeJSONL(w, tools) }); err != nil {
		return fmt.Errorf("write catalog %s: %w", path, err)
	}
	return nil
}

// EncodeJSONL writes tools to w, one per line. A tool failing Validate is an error before
// anything is written, so a catalog on disk always reads back.
func EncodeJSONL(w io.Writer, tools []Tool) error {
	for i := range tools {
		if err := tools[i].Validate(); err != nil {
			return fmt.Errorf("record %d: %w", i+1, err)
		}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range tools {
		if err := enc.Encode(&tools[i]); err != nil {
			return fmt.Errorf("tool %s: %w", tools[i].ID, err)
		}
	}
	return nil
}
