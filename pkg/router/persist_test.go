package router

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/binenc"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
)

// testCalibrator is a calibrator with the hubness feature, as FitCalibration returns one.
func testCalibrator() *bandit.Calibrator {
	return &bandit.Calibrator{Weights: [4]float64{-1, 2, 3, -0.5}, Examples: 40, Positives: 9,
		Hub: &bandit.Hubness{Weight: -0.4, Depth: 1, Queries: 4, Strength: 10, MeanShare: 0.5, LikelihoodRatio: 12.5,
			Counts: map[string]int{"a/b/c": 4, "x/y/z": 0}}}
}

// TestSnapshotKeepsTheCalibratorsHubness: the snapshot stores the hubness feature (its counts
// by id) and a version 1 snapshot, written before it existed, is still read, without it.
func TestSnapshotKeepsTheCalibratorsHubness(t *testing.T) {
	e := &entry{tool: catalog.Tool{ID: "a/b/c", Name: "c", Platform: "other"}, index: 0, vector: []float32{1, 0}}
	s := &snapshot{spec: "{}", frontend: "x", dim: 2, calibrator: testCalibrator(), calibration: "fitted",
		entries: []*entry{e}, providers: []string{"tool:a/b/c"}, policy: []byte("p")}
	raw, err := s.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeSnapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.calibrator, s.calibrator) {
		t.Fatalf("calibrator %+v %+v, want %+v %+v", got.calibrator, got.calibrator.Hub, s.calibrator, s.calibrator.Hub)
	}
	dropped := *s
	dropped.calibrator = &bandit.Calibrator{Weights: [4]float64{1, 2, 3, 4}, HubDropped: "hubness dropped: reasons"}
	if raw, err = dropped.encode(); err != nil {
		t.Fatal(err)
	}
	if got, err = decodeSnapshot(raw); err != nil || !reflect.DeepEqual(got.calibrator, dropped.calibrator) {
		t.Fatalf("without hubness: %+v, %v", got.calibrator, err)
	}

	// Version 1: the same envelope, the calibrator without its last two fields.
	w := binenc.NewWriter([]byte(snapshotMagic))
	w.Uvarint(1)
	w.String("{}")
	w.String("x")
	w.Int(2)
	w.Uvarint(0)
	w.Varint(0)
	w.Varint(0)
	w.Bool(true)
	for _, v := range []float64{1, 2, 3, 4} {
		w.Float64(v)
	}
	w.Int(10)
	w.Int(2)
	w.String("old")
	w.Uvarint(1)
	if err := writeEntry(w, e); err != nil {
		t.Fatal(err)
	}
	w.Uvarint(1)
	w.String("tool:a/b/c")
	w.Uvarint(0)
	w.Raw([]byte("p"))
	old, err := decodeSnapshot(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if old.calibrator.Weights != [4]float64{1, 2, 3, 4} || old.calibrator.Hub != nil || old.calibration != "old" || old.calibrator.Examples != 10 {
		t.Fatalf("version 1 calibrator %+v (%q)", old.calibrator, old.calibration)
	}

	// A stored hubness feature that no fit could have produced is refused.
	bad := *s
	bad.calibrator = testCalibrator()
	bad.calibrator.Hub.Counts["a/b/c"] = 5
	if raw, err = bad.encode(); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSnapshot(raw); err == nil || !strings.Contains(err.Error(), `hub.counts["a/b/c"]`) {
		t.Fatalf("a count above the bank's size: %v", err)
	}
}

// TestLoadCalibrationRefusals: a calibration file is read, or refused naming the file and what
// is wrong with it.
func TestLoadCalibrationRefusals(t *testing.T) {
	dir := t.TempDir()
	hub := `"hub": {"weight": -0.4, "depth": 1, "queries": 4, "strength": 10, "mean_share": 0.5, "likelihood_ratio": 9, "counts": {"a/b/c": 4, "x/y/z": 0}}`
	for _, c := range []struct {
		name, body, want string // want "": accepted
	}{
		{"bare", `{"weights": [-1, 2, 3, -0.5]}`, ""},
		{"bare with hubness", `{"weights": [-1, 2, 3, -0.5], ` + hub + `}`, ""},
		{"table2", `{"world": {"retriever": "bm25+hashed-bow-384", "calibrator": {"weights": [1, 2, 3, 4], ` + hub + `}}, "rows": []}`, ""},
		{"five weights", `{"weights": [-1, 2, 3, -0.5, -0.4]}`, "weights has 5 numbers, want 4"},
		{"misspelt key", `{"weights": [-1, 2, 3, -0.5], "hub": {"weight": -0.4, "depth": 1, "queries": 4, "strength": 10, "mean_share": 0.5, "likelihood_ratio": 9, "count": {"a/b/c": 4}}}`, `unknown field "count"`},
		{"positive hub weight", `{"weights": [-1, 2, 3, -0.5], ` + strings.Replace(hub, `"weight": -0.4`, `"weight": 0.4`, 1) + `}`, "hub.weight = 0.4"},
		{"another retriever", `{"world": {"retriever": "dense:x", "calibrator": {"weights": [1, 2, 3, 4]}}}`, `fitted for retriever "dense:x"`},
		{"neither", `{"rows": []}`, "neither a calibrator"},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
			t.Fatal(err)
		}
		cal, _, err := LoadCalibration(path, "bm25+hashed-bow-384")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && strings.Contains(c.body, `"hub"`) && (cal.Hub == nil || cal.Hub.Counts["a/b/c"] != 4):
			t.Errorf("%s: hub %+v", c.name, cal.Hub)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path)):
			t.Errorf("%s: %v, want an error naming %s and %q", c.name, err, path, c.want)
		}
	}
}
