package catalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// ReadJSONL reads a catalog, one JSON Tool per line. Blank lines are skipped. A malformed line,
// a tool failing Validate, or a duplicate id is an error naming the file and line.
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	var tools []Tool
	seen := map[string]int{}
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var t Tool
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("%s:%d: malformed tool record: %w", name, line, err)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if prev, dup := seen[t.ID]; dup {
			return nil, fmt.Errorf("%s:%d: duplicate tool id %q (first on line %d)", name, line, t.ID, prev)
		}
		seen[t.ID] = line
		tools = append(tools, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	return tools, nil
}

// WriteJSONL atomically writes tools to path, one per line.
func WriteJSONL(path string, tools []Tool) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for i := range tools {
			if err := enc.Encode(&tools[i]); err != nil {
				return fmt.Errorf("tool %s: %w", tools[i].ID, err)
			}
		}
		return nil
	})
}
