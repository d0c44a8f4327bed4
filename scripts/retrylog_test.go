package scripts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// retryCandidate is a candidate of a hand-made Retry log.
type retryCandidate struct {
	Tool       string  `json:"tool"`
	Calibrated float64 `json:"calibrated"`
}

// retryLog builds a hand-made Retry (k=3) decision log for the fallback replays.
type retryLog struct {
	lines []string
	n     int
}

// walk logs one step: the candidates are tried in order until the one at position executed
// runs, which serves the query if served says so.
func (l *retryLog) walk(step int, query string, cands []retryCandidate, executed int, served bool) {
	add := func(v any) {
		b, _ := json.Marshal(v)
		l.lines = append(l.lines, string(b))
	}
	for a := 0; a <= executed; a++ {
		l.n++
		id := "r/" + string(rune('a'+l.n))
		add(map[string]any{"v": 1, "kind": "decision", "id": id, "t": step, "policy": "Retry (k=3)", "attempt": a,
			"query": map[string]string{"id": query}, "candidates": cands, "chosen": cands[a].Tool, "chosen_position": a})
		add(map[string]any{"v": 1, "kind": "outcome", "id": id, "t": step, "tool": cands[a].Tool, "position": a,
			"executed": a == executed, "served": a == executed && served})
	}
}

// write puts the log in dir as one run's file.
func (l *retryLog) write(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "execution_flaky-20_Retry-k=3_seed1-000001.jsonl"), []byte(strings.Join(l.lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
