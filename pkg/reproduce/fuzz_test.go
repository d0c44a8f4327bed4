package reproduce

import (
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// FuzzParseExpected feeds an expected-values file (seed: pkg/reproduce/expected/default.json,
// testdata/fuzz/FuzzParseExpected): any input is an error naming the file, or tables with usable
// tolerances.
func FuzzParseExpected(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzParseExpected")
		e, err := parseExpected(data, "exp.json")
		if err != nil {
			if !strings.Contains(err.Error(), "exp.json") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		for name, tab := range e.Tables {
			if !(tab.Tolerance >= 0) {
				t.Fatalf("table %s: tolerance %v", name, tab.Tolerance)
			}
		}
	})
}
