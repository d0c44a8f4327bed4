package decisionlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// Record is one line of a log: exactly one of Decision and Outcome is set.
type Record struct {
	Decision *Decision
	Outcome  *Outcome
	// File and Line say where the record was read (Decode's name and the 1-based line), so a
	// reader joining several files can name them in its errors; empty and 0 for records built
	// in memory.
	File string
	Line int
}

// Where is "file:line" of a record read by Decode, or "" for one built in memory.
func (r Record) Where() string {
	if r.File == "" {
		return ""
	}
	return fmt.Sprintf("%s:%d", r.File, r.Line)
}

// ReadStats says what a read skipped.
type ReadStats struct {
	// TornTails names the files whose last line was cut short (an interrupted write), in the
	// order read: one per replica or run that was killed mid-write.
	TornTails []string
}

// ReadFiles reads the files in order and calls fn for every record. A malformed line is an
// error naming file and line, except a last line without its newline (a torn write), which is
// skipped and reported in the stats.
func ReadFiles(paths []string, fn func(Record) error) (ReadStats, error) {
	var st ReadStats
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return st, fmt.Errorf("decision log: %w", err)
		}
		torn, err := Decode(f, p, fn)
		f.Close()
		if err != nil {
			return st, err
		}
		if torn {
			st.TornTails = append(st.TornTails, p)
		}
	}
	return st, nil
}

// Decode reads records from r (name is used in errors); torn reports a skipped last line that
// has no newline.
func Decode(r io.Reader, name string, fn func(Record) error) (torn bool, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		raw, err := br.ReadBytes('\n')
		if err == io.EOF {
			return len(bytes.TrimSpace(raw)) > 0, nil
		}
		if err != nil {
			return false, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rec, err := parseLine(raw)
		if err != nil {
			return false, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		rec.File, rec.Line = name, line
		if err := fn(rec); err != nil {
			return false, err
		}
	}
}

func parseLine(raw []byte) (Record, error) {
	var head struct {
		V    int    `json:"v"`
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Record{}, fmt.Errorf("malformed record: %w", err)
	}
	if head.V != Version {
		return Record{}, fmt.Errorf("record version %d, this build reads %d", head.V, Version)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	switch head.Kind {
	case KindDecision:
		var d Decision
		if err := dec.Decode(&d); err != nil {
			return Record{}, fmt.Errorf("malformed decision: %w", err)
		}
		if d.ChosenPosition < 0 || d.ChosenPosition >= len(d.Candidates) || d.Candidates[d.ChosenPosition].Tool != d.Chosen {
			return Record{}, fmt.Errorf("decision %s: chosen %q is not candidate %d", d.ID, d.Chosen, d.ChosenPosition)
		}
		return Record{Decision: &d}, nil
	case KindOutcome:
		var o Outcome
		if err := dec.Decode(&o); err != nil {
			return Record{}, fmt.Errorf("malformed outcome: %w", err)
		}
		return Record{Outcome: &o}, nil
	}
	return Record{}, fmt.Errorf("unknown record kind %q", head.Kind)
}
