package router

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rated-dev/rated/internal/binenc"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
)

// FuzzStateRecords feeds arbitrary bytes to the decoders of the router's durable state (the
// snapshot envelope and every record kind): a torn or foreign record must be an error, never a
// panic or a huge allocation.
func FuzzStateRecords(f *testing.F) {
	st := &step{t: 3, attempt: 1, context: []float32{0.6, 0.8}, cands: []bandit.Candidate{{Tool: 0, Sem: 0.9, Prior: 0.5, Relevance: 0.3}, {Tool: 1}},
		excluded: []bool{true, false}}
	f.Add((&reportRecord{decision: "d1-1", t: 4, step: st, pos: 1, fb: bandit.Feedback{Executed: true}, latency: 12}).encode())
	e := &entry{tool: catalog.Tool{ID: "a/b/c", Name: "c", Platform: "other"}, index: 0, vector: []float32{1, 0}}
	tr, _ := (&toolRecord{e: e, providerKey: "tool:a/b/c"}).encode()
	f.Add(tr)
	f.Add(encodeDelete("a/b/c"))
	f.Add(encodeBoot(2, 12345, 0))
	snap, err := (&snapshot{spec: "{}", frontend: "x", dim: 2, entries: []*entry{e}, providers: []string{"tool:a/b/c"},
		pending: []*decision{{id: "d1-2", step: st, reported: make([]reported, 2)}}, policy: []byte("p")}).encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snap)
	snap, err = (&snapshot{spec: "{}", frontend: "x", dim: 2, calibrator: testCalibrator(), entries: []*entry{e},
		providers: []string{"tool:a/b/c"}, policy: []byte("p")}).encode()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(snap)
	f.Fuzz(func(t *testing.T, raw []byte) {
		decodeSnapshot(raw)
		if len(raw) == 0 {
			return
		}
		r := binenc.NewReader(raw[1:])
		switch raw[0] {
		case recReport:
			decodeReport(r, 2)
		case recTool:
			_ = r.String()
			readEntry(r)
		case recDelete:
			_ = r.String()
		case recBoot:
			r.Uvarint()
			r.Varint()
		}
		_ = r.End()
	})
}

// FuzzLoadCalibration: any calibration file is read into a calibrator or refused with an error
// naming the file.
func FuzzLoadCalibration(f *testing.F) {
	f.Add(`{"weights": [-3, 4, 2, -0.5], "examples": 10, "positives": 2}`)
	f.Add(`{"world": {"retriever": "BM25", "calibration": "dev", "calibrator": {"weights": [1, 2, 3, 4]}}}`)
	f.Add(`{"world": {"retriever": "dense:x"}}`)
	f.Add(`{"weights": [1e999, 0, 0, 0]}`)
	f.Add(`{"weights": [-1, 2, 3, -0.5], "hub": {"weight": -0.4, "depth": 1, "queries": 4, "strength": 10, "mean_share": 1, "likelihood_ratio": 9, "counts": {"a/b/c": 4}}}`)
	f.Add(`{"weights": [-1, 2, 3, -0.5], "hub": {"weight": -0.4, "depth": 1, "queries": 4, "strength": 10, "mean_share": 1, "likelihood_ratio": 9, "counts": {"a/b/c": 5}}}`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		path := filepath.Join(dir, "cal.json")
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c, _, err := LoadCalibration(path, "bm25+hashed-bow-384")
		if err == nil && c == nil {
			t.Fatal("no calibrator and no error")
		}
	})
}
