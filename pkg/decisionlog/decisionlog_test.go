package decisionlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/diskfull"
	"github.com/rated-dev/rated/internal/testfs"
)

func sampleDecision(id string) *Decision {
	when := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	return &Decision{V: Version, Kind: KindDecision, ID: id, Time: &when, T: 7, Source: SourceServe,
		Policy: "RATED-R", Query: Query{Text: "weather in Paris"}, Chosen: "b", ChosenPosition: 1,
		Candidates: []Candidate{
			{Tool: "a", Semantic: 0.8, Calibrated: 0.4, Prior: 0.5, Score: Float(0.1), Relevance: Float(0.4), Reliability: Float(0.25), Masked: true, Rank: Int(1)},
			{Tool: "b", Semantic: 0.7, Calibrated: 0.3, Prior: 0.6, Score: Float(0.3), Relevance: Float(0.3), Reliability: Float(1), Propensity: 1, Rank: Int(0)},
		}}
}

// TestDecisionFormat pins the documented field names (docs/DECISION-LOG.md) with a hand-written
// line.
func TestDecisionFormat(t *testing.T) {
	d := sampleDecision("d1")
	d.Candidates = d.Candidates[1:]
	d.ChosenPosition = 0
	d.Candidates[0].Score, d.Candidates[0].Relevance = nil, Float(0.5)
	got, _ := json.Marshal(d)
	want := `{"v":1,"kind":"decision","id":"d1","time":"2026-05-01T12:00:00Z","t":7,"source":"serve","policy":"RATED-R","explores":false,` +
		`"query":{"text":"weather in Paris"},"attempt":0,"candidates":[{"tool":"b","semantic":0.7,"calibrated":0.3,"prior":0.6,` +
		`"score":null,"relevance":0.5,"reliability":1,"propensity":1,"rank":0}],"chosen":"b","chosen_position":0}`
	if string(got) != want {
		t.Fatalf("decision line\n got %s\nwant %s", got, want)
	}
	yes, lat := true, 12.5
	o := &Outcome{V: Version, Kind: KindOutcome, ID: "d1", T: 9, Tool: "b", Chosen: true, Executed: true, TaskSuccess: &yes, LatencyMS: &lat}
	got, _ = json.Marshal(o)
	want = `{"v":1,"kind":"outcome","id":"d1","t":9,"tool":"b","position":0,"chosen":true,"executed":true,"task_success":true,"latency_ms":12.5}`
	if string(got) != want {
		t.Fatalf("outcome line\n got %s\nwant %s", got, want)
	}
}

func TestContextEncodingByHand(t *testing.T) {
	// 1.0f = 00 00 80 3f, −2.0f = 00 00 00 c0 (little-endian) → base64 "AACAPwAAAMA=".
	if s := EncodeContext([]float64{1, -2}); s != "AACAPwAAAMA=" {
		t.Fatalf("EncodeContext = %q", s)
	}
	v, err := DecodeContext("AACAPwAAAMA=", 2)
	if err != nil || v[0] != 1 || v[1] != -2 {
		t.Fatalf("DecodeContext = %v, %v", v, err)
	}
	if _, err := DecodeContext("AACAPw==", 2); err == nil {
		t.Fatal("wrong dimension accepted")
	}
	// float32 bits 0x7fc00000 (NaN) and 0xff800000 (−Inf), little-endian, after a 1.
	for s, want := range map[string]string{"AACAPwAAwH8=": "context[1] = NaN", "AACAPwAAgP8=": "context[1] = -Inf"} {
		if _, err := DecodeContext(s, 2); err == nil || !strings.Contains(err.Error(), want+": not a finite number") {
			t.Errorf("DecodeContext(%q) = %v, want %q", s, err, want)
		}
	}
}

func readAll(t *testing.T, dir string) ([]Record, ReadStats) {
	t.Helper()
	files, err := Files(dir, "decisions")
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	st, err := ReadFiles(files, func(r Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return recs, st
}

func TestRotationAndRetention(t *testing.T) {
	dir := t.TempDir()
	line, _ := json.Marshal(sampleDecision("d-00"))
	per := int64(len(line) + 1)
	w, err := Open(dir, Options{MaxBytes: 3 * per})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := w.Write(sampleDecision(fmt.Sprintf("d-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	files, _ := Files(dir, "decisions")
	if len(files) != 4 { // 3 + 3 + 3 + 1 lines
		t.Fatalf("%d files, want 4: %v", len(files), files)
	}
	for _, f := range files {
		if st, _ := os.Stat(f); st.Size() > 3*per {
			t.Fatalf("%s has %d bytes, above MaxBytes %d", f, st.Size(), 3*per)
		}
	}
	recs, _ := readAll(t, dir)
	for i, r := range recs {
		if r.Decision == nil || r.Decision.ID != fmt.Sprintf("d-%02d", i) {
			t.Fatalf("record %d out of order: %+v", i, r)
		}
	}
	// Reopening continues the last file; retention keeps the newest two.
	w, _ = Open(dir, Options{MaxBytes: 3 * per, MaxFiles: 2})
	for i := 10; i < 13; i++ {
		w.Write(sampleDecision(fmt.Sprintf("d-%02d", i)))
	}
	w.Close()
	files, _ = Files(dir, "decisions")
	if len(files) != 2 || !strings.HasSuffix(files[1], "-000005.jsonl") {
		t.Fatalf("files after retention: %v", files)
	}
	recs, _ = readAll(t, dir)
	if len(recs) != 4 || recs[0].Decision.ID != "d-09" || recs[3].Decision.ID != "d-12" {
		t.Fatalf("records kept: %d, first %s", len(recs), recs[0].Decision.ID)
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	w, _ := Open(dir, Options{})
	w.Write(sampleDecision("whole"))
	w.Close()
	files, _ := Files(dir, "decisions")
	f, _ := os.OpenFile(files[0], os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"v":1,"kind":"decision","id":"to`) // killed mid-write
	f.Close()
	recs, st := readAll(t, dir)
	if len(recs) != 1 || len(st.TornTails) != 1 || st.TornTails[0] != files[0] {
		t.Fatalf("reader: %d records, torn %q", len(recs), st.TornTails)
	}
	// A torn line in the middle of a file is an error naming file and line.
	raw, _ := os.ReadFile(files[0])
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, append(append([]byte{}, raw...), '\n'), 0o644)
	if _, err := ReadFiles([]string{bad}, func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2") {
		t.Fatalf("mid-file torn line: %v", err)
	}
	// Open repairs the tail, and the next line starts cleanly.
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(&Outcome{V: Version, Kind: KindOutcome, ID: "whole", Tool: "b", Executed: true})
	w.Close()
	recs, st = readAll(t, dir)
	if len(recs) != 2 || recs[1].Outcome == nil || len(st.TornTails) != 0 {
		t.Fatalf("after repair: %d records, torn %q", len(recs), st.TornTails)
	}
}

func TestDiskFullLeavesNoPartialLine(t *testing.T) {
	dir := testfs.Tmpfs(t, 1<<20)
	w, err := Open(filepath.Join(dir, "log"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	filler := testfs.Fill(t, dir, 16<<10)
	big := sampleDecision("big")
	big.Query.Text = strings.Repeat("x", 3000)
	var acked int
	var werr error
	for i := 0; i < 1000; i++ {
		if werr = w.Write(big); werr != nil {
			break
		}
		acked++
	}
	if !errors.Is(werr, diskfull.ErrFull) || !strings.Contains(werr.Error(), "decisions-000001.jsonl") {
		t.Fatalf("write on a full disk: %v", werr)
	}
	os.Remove(filler)
	if err := w.Write(sampleDecision("after")); err != nil {
		t.Fatalf("write after freeing space: %v", err)
	}
	w.Close()
	recs, st := readAll(t, filepath.Join(dir, "log"))
	if len(recs) != acked+1 || len(st.TornTails) != 0 || recs[acked].Decision.ID != "after" {
		t.Fatalf("%d records (torn %q), want the %d acknowledged + 1", len(recs), st.TornTails, acked)
	}
}

func FuzzDecode(f *testing.F) {
	d, _ := json.Marshal(sampleDecision("d1"))
	o, _ := json.Marshal(&Outcome{V: Version, Kind: KindOutcome, ID: "d1", Tool: "b"})
	f.Add(append(append(append(d, '\n'), o...), '\n'))
	f.Add([]byte(`{"v":1,"kind":"decision","chosen_position":5}` + "\n"))
	f.Add([]byte(`{"v":1,"kind":"outcome"`))
	f.Fuzz(func(t *testing.T, data []byte) {
		Decode(bytes.NewReader(data), "fuzz", func(r Record) error {
			if (r.Decision == nil) == (r.Outcome == nil) {
				t.Fatal("a record must be exactly one kind")
			}
			if d := r.Decision; d != nil && d.Candidates[d.ChosenPosition].Tool != d.Chosen {
				t.Fatal("chosen not validated")
			}
			return nil
		})
	})
}

// TestFilesInListsEveryJSONL: FilesIn lists every *.jsonl of a directory (what eval replay reads
// from it), whatever its prefix, and nothing for a directory that does not exist.
func TestFilesInListsEveryJSONL(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b_seed1-000001.jsonl", "a.jsonl", "notes.txt"} {
		os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "old.jsonl"), 0o755)
	got, err := FilesIn(dir)
	want := []string{filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b_seed1-000001.jsonl")}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("FilesIn = %v, %v; want %v", got, err, want)
	}
	if got, err := FilesIn(filepath.Join(dir, "absent")); err != nil || got != nil {
		t.Fatalf("FilesIn(absent) = %v, %v", got, err)
	}
	file := filepath.Join(dir, "a.jsonl")
	if _, err := FilesIn(file); err == nil || !strings.Contains(err.Error(), file) {
		t.Fatalf("FilesIn(a file) = %v, want an error naming it", err)
	}
}

// TestFailedRotationRecovers: the next file cannot be opened (a directory holds its name, as a
// full disk or no free descriptor would refuse it); the write fails, and once the cause is gone
// the writer goes on. It used to close its current file first and fail every later write with
// "file already closed", and serve every selection with it.
func TestFailedRotationRecovers(t *testing.T) {
	dir := t.TempDir()
	line, _ := json.Marshal(sampleDecision("d-00"))
	w, err := Open(dir, Options{MaxBytes: int64(len(line) + 1)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(sampleDecision("d-00")); err != nil {
		t.Fatal(err)
	}
	block := filepath.Join(dir, "decisions-000002.jsonl")
	os.Mkdir(block, 0o755)
	if err := w.Write(sampleDecision("d-01")); err == nil {
		t.Fatal("a write needing a blocked file succeeded")
	}
	os.Remove(block)
	if err := w.Write(sampleDecision("d-02")); err != nil {
		t.Fatalf("after the block was removed: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _ := readAll(t, dir)
	if len(recs) != 2 || recs[0].Decision.ID != "d-00" || recs[1].Decision.ID != "d-02" {
		t.Fatalf("records %+v, want d-00 and d-02", recs)
	}
}

// TestOneWriterPerPrefix: a second writer on the same directory and prefix (two replicas given
// one --decision-log) is refused while the first is open, naming the holder; another prefix is
// not; after Close the prefix is free again.
func TestOneWriterPerPrefix(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{}); err == nil || !strings.Contains(err.Error(), "in use by another rated run") {
		t.Fatalf("a second writer: error %v", err)
	}
	other, err := Open(dir, Options{Prefix: "other"})
	if err != nil {
		t.Fatalf("another prefix: %v", err)
	}
	other.Close()
	w.Close()
	w, err = Open(dir, Options{})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	w.Close()
	if files, _ := FilesIn(dir); len(files) != 2 {
		t.Fatalf("FilesIn lists %v, want the two logs only (no lock file)", files)
	}
}
