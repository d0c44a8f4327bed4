package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
)

// The calibrator maps a candidate's retrieval features (S_sem, gap to the top, rank) to
// P(relevant). Its weights depend on the retriever's score distribution, so it must come from
// the same retriever the router uses. Two sources, never a silent default:
//   - a file: the `calibrator` that `rated eval dynamic` writes in table2.json (world.calibrator,
//     checked against world.retriever) or a bare calibrator JSON ({"weights": [...]}, and
//     optionally "hub": the hubness feature, keyed by tool id), fitted on your own labelled dev
//     split;
//   - FitCalibration on a labelled benchmark split with the router's own frontend: `rated serve`
//     fits it once, on the embedded default benchmark's dev split, when the policy needs one and
//     the state holds none, and stores it in the state.

// LoadCalibration reads a calibrator from path for a router whose frontend is named frontend.
func LoadCalibration(path, frontend string) (*bandit.Calibrator, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("calibration: %w", err)
	}
	var doc struct {
		Weights []float64 `json:"weights"`
		World   *struct {
			Retriever   string             `json:"retriever"`
			Split       string             `json:"split"`
			Calibration string             `json:"calibration"`
			Calibrator  *bandit.Calibrator `json:"calibrator"`
		} `json:"world"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); err != nil {
		return nil, "", fmt.Errorf("calibration %s: %w", path, err)
	}
	var c *bandit.Calibrator
	var note string
	switch {
	case doc.World != nil:
		if doc.World.Calibrator == nil {
			return nil, "", fmt.Errorf("calibration %s: world.calibrator is missing (the run's policies needed none)", path)
		}
		if !sameRetriever(doc.World.Retriever, frontend) {
			return nil, "", fmt.Errorf("calibration %s: fitted for retriever %q, the router uses %q", path, doc.World.Retriever, frontend)
		}
		c = doc.World.Calibrator
		note = fmt.Sprintf("from %s (%s)", path, doc.World.Calibration)
	case doc.Weights != nil:
		if len(doc.Weights) != bandit.CalibrationFeatures {
			return nil, "", fmt.Errorf("calibration %s: weights has %d numbers, want %d (intercept, S_sem, gap to top, log(1+rank); the hubness weight is hub.weight)",
				path, len(doc.Weights), bandit.CalibrationFeatures)
		}
		var bare bandit.Calibrator
		strict := json.NewDecoder(bytes.NewReader(raw))
		strict.DisallowUnknownFields() // a misspelt key ("count" for "counts") must not pass as absent
		if err := strict.Decode(&bare); err != nil {
			return nil, "", fmt.Errorf("calibration %s: %w", path, err)
		}
		c, note = &bare, "from "+path
	default:
		return nil, "", fmt.Errorf("calibration %s: neither a calibrator ({\"weights\": [4 numbers]}) nor a table2.json with world.calibrator", path)
	}
	if err := c.Validate(); err != nil {
		return nil, "", fmt.Errorf("calibration %s: %w", path, err)
	}
	return c, note, nil
}

// sameRetriever reports whether eval dynamic's retriever name matches a router frontend.
func sameRetriever(evalName, frontend string) bool {
	if evalName == frontend {
		return true
	}
	return evalName == "BM25" && strings.HasPrefix(frontend, "bm25+")
}

// FitCalibration fits the calibrator on split of b with the frontend f: each of the split's
// queries is ranked k deep over b's corpus, exactly as the router ranks its catalog, and every
// candidate is an example labelled by the qrels. hubDepth > 0 offers the hubness feature
// (bandit.Hubness), the split's queries being the bank, with hubStrength pseudo-queries.
func FitCalibration(f Frontend, b *bench.Bench, split string, k, hubDepth int, hubStrength float64) (*bandit.Calibrator, string, error) {
	queries := b.SplitQueries(split)
	if len(queries) == 0 {
		return nil, "", fmt.Errorf("benchmark has no %q split with qrels", split)
	}
	if hubDepth < 0 {
		return nil, "", fmt.Errorf("hubness depth %d: must be >= 0", hubDepth)
	}
	hubDepth = min(hubDepth, k) // the lists are k deep
	tools := b.CorpusTools()
	vecs, err := f.DocVectors(tools)
	if err != nil {
		return nil, "", err
	}
	ix, err := f.Index(tools, vecs)
	if err != nil {
		return nil, "", err
	}
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i] = q.Text
	}
	ctxs, err := f.Contexts(texts)
	if err != nil {
		return nil, "", err
	}
	lists := make([]bandit.CalibrationList, 0, len(queries))
	for qi, q := range queries {
		found, err := ix.Search(q.Text, ctxs[qi], k)
		if err != nil {
			return nil, "", fmt.Errorf("query %s: %w", q.ID, err)
		}
		rel := map[string]bool{}
		for _, id := range b.Relevant(split, q.ID) {
			rel[id] = true
		}
		var l bandit.CalibrationList
		for _, c := range found {
			l.Sem = append(l.Sem, c.Score)
			l.Relevant = append(l.Relevant, rel[c.ID])
			l.Tools = append(l.Tools, c.ID)
		}
		lists = append(lists, l)
	}
	var hub *bandit.HubConfig
	if hubDepth > 0 {
		hub = &bandit.HubConfig{Depth: hubDepth, Strength: hubStrength}
		for _, t := range tools {
			hub.Catalog = append(hub.Catalog, t.ID)
		}
	}
	c, err := bandit.FitCalibrator(lists, 1e-6, hub)
	if err != nil {
		return nil, "", err
	}
	return c, fmt.Sprintf("%s fitted on the %d %s-split queries' top %d with %s (%d examples, %d relevant)",
		c.Describe(), len(queries), split, k, f.Name(), c.Examples, c.Positives), nil
}
