package synth

import (
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/pkg/catalog"
)

// AuditColumns is the header of an audit CSV. A person fills human_label with 1 (the tool does
// what the request asks) or 0 (it does not); yes/no and true/false are accepted too.
var AuditColumns = []string{"key", "query_id", "query", "tool_id", "tool_name", "tool_description", "validator_score", "validator_keep", "human_label"}

// AuditStrata are the validator-score bins an audit sample is stratified over, so that a person
// sees rejected, borderline and kept pairs (upper bounds exclusive except the last).
var AuditStrata = []float64{0, 0.25, 0.5, 0.85, 1.0000001}

// RealTag is the settings tag of a Real journal key ("" for the untagged "real/…" layout) and
// whether key is a Real key at all.
func RealTag(key string) (string, bool) {
	if strings.HasPrefix(key, "real/") {
		return "", true
	}
	rest, ok := strings.CutPrefix(key, "real@")
	if !ok {
		return "", false
	}
	head, _, _ := strings.Cut(rest, "/")
	tag, _, _ := strings.Cut(head, ".")
	return tag, true
}

// RealRecordsOfTag keeps the Real records journaled under settings tag ("" : the untagged
// layout), so that an audit samples the verdicts of one model and seed, not of every run that
// shared the journal.
func RealRecordsOfTag(recs []Record, tag string) []Record {
	var out []Record
	for _, r := range recs {
		if t, ok := RealTag(r.Key); ok && t == tag {
			out = append(out, r)
		}
	}
	return out
}

// SampleAudit draws up to n validated Real pairs from the journal, stratified over AuditStrata:
// the sample is split as evenly as possible over the non-empty strata (a stratum with fewer pairs
// than its share gives its rest to the others), each stratum sampled without replacement with
// rng. The result is ordered by key.
func SampleAudit(recs []Record, n int, rng *rand.Rand) []Record {
	strata := make([][]Record, len(AuditStrata)-1)
	// A pair validated under several keys (before and after settings were part of the key) is
	// one pair: its last record.
	last := map[string]int{}
	for i, r := range recs {
		if pair, ok := realPair(r.Key); ok && r.OK {
			last[pair] = i
		}
	}
	for i, r := range recs {
		if pair, ok := realPair(r.Key); !ok || !r.OK || last[pair] != i {
			continue
		}
		for s := 0; s+1 < len(AuditStrata); s++ {
			if r.Score >= AuditStrata[s] && r.Score < AuditStrata[s+1] {
				strata[s] = append(strata[s], r)
				break
			}
		}
	}
	for _, s := range strata {
		sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key })
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	}
	take := make([]int, len(strata))
	left := n
	for left > 0 {
		open := 0
		for s := range strata {
			if take[s] < len(strata[s]) {
				open++
			}
		}
		if open == 0 {
			break
		}
		share := max(1, left/open)
		for s := range strata {
			if left == 0 {
				break
			}
			add := min(share, len(strata[s])-take[s], left)
			take[s] += add
			left -= add
		}
	}
	var out []Record
	for s := range strata {
		out = append(out, strata[s][:take[s]]...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// WriteAuditCSV writes the sample for a person to label (human_label left empty).
func WriteAuditCSV(path string, sample []Record, tools []catalog.Tool, keep float64) error {
	byID := map[string]catalog.Tool{}
	for _, t := range tools {
		byID[t.ID] = t
	}
	return writeCSV(path, AuditColumns, func(emit func([]string) error) error {
		for _, r := range sample {
			t := byID[r.ToolID]
			k := "0"
			if r.Score >= keep {
				k = "1"
			}
			if err := emit([]string{r.Key, r.QueryID, r.Query, r.ToolID, t.Name, t.Description, strconv.FormatFloat(r.Score, 'f', -1, 64), k, ""}); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeCSV writes header and the rows that each emits to path, atomically.
func writeCSV(path string, header []string, each func(emit func([]string) error) error) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return err
		}
		if err := each(cw.Write); err != nil {
			return err
		}
		cw.Flush()
		return cw.Error()
	})
}

// humanLabel reads a human_label cell: 1/0, yes/no, y/n or true/false (any case); ok is false
// for anything else.
func humanLabel(s string) (yes, ok bool) {
	yes, ok = map[string]bool{"1": true, "yes": true, "y": true, "true": true, "0": false, "no": false, "n": false, "false": false}[strings.ToLower(strings.TrimSpace(s))]
	return yes, ok
}

// Agreement compares the validator's keep decisions with a person's labels.
type Agreement struct {
	Labelled int `json:"labelled"`
	// Unlabelled rows (empty human_label) are skipped.
	Unlabelled int     `json:"unlabelled"`
	Agree      int     `json:"agree"`
	Rate       float64 `json:"agreement"`
	// Confusion counts: validator keep (1) or drop (0) against the human label.
	KeepYes int `json:"validator_keep_human_yes"`
	KeepNo  int `json:"validator_keep_human_no"`
	DropYes int `json:"validator_drop_human_yes"`
	DropNo  int `json:"validator_drop_human_no"`
	// Kappa is Cohen's kappa (agreement beyond chance); nil when undefined (one class only).
	Kappa *float64 `json:"cohen_kappa,omitempty"`
}

// ReadAuditAgreement reads a labelled audit CSV and computes the agreement of validator_keep with
// human_label. A row with an unreadable label is an error naming the line.
func ReadAuditAgreement(path string) (Agreement, error) {
	var a Agreement
	err := readCSV(path, []string{"validator_keep", "human_label"}, func(line int, cell func(string) string) error {
		lab := strings.ToLower(strings.TrimSpace(cell("human_label")))
		if lab == "" {
			a.Unlabelled++
			return nil
		}
		human, ok := humanLabel(lab)
		if !ok {
			return fmt.Errorf("human_label %q is not 1/0, yes/no or true/false", lab)
		}
		keep := strings.TrimSpace(cell("validator_keep")) == "1"
		a.Labelled++
		switch {
		case keep && human:
			a.KeepYes++
		case keep && !human:
			a.KeepNo++
		case !keep && human:
			a.DropYes++
		default:
			a.DropNo++
		}
		return nil
	})
	if err != nil {
		return a, err
	}
	a.Agree = a.KeepYes + a.DropNo
	if a.Labelled > 0 {
		n := float64(a.Labelled)
		a.Rate = float64(a.Agree) / n
		pKeep := float64(a.KeepYes+a.KeepNo) / n
		pYes := float64(a.KeepYes+a.DropYes) / n
		pe := pKeep*pYes + (1-pKeep)*(1-pYes)
		if pe < 1 {
			k := (a.Rate - pe) / (1 - pe)
			a.Kappa = &k
		}
	}
	return a, nil
}

// readCSV reads a CSV with a header row that has at least the columns need, calling each for
// every data row with its line number and a cell getter by column name; an error of each is
// returned naming the file and line.
func readCSV(path string, need []string, each func(line int, cell func(string) string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("audit csv: %w", err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s:1: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, c := range need {
		if _, ok := col[c]; !ok {
			return fmt.Errorf("%s:1: no %q column", path, c)
		}
	}
	for line := 2; ; line++ {
		row, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		cell := func(c string) string { // "" for a column the file does not have
			if i, ok := col[c]; ok && i < len(row) {
				return row[i]
			}
			return ""
		}
		if err := each(line, cell); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
}
