package scripts

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealCoverageSummary checks real-coverage-sample.py's summary on a hand-made label file: a
// query counts as served when one of its pairs is labelled 1 at or above the threshold, and the
// share's interval is Wilson's (2 of 4: [0.150, 0.850], the textbook value).
func TestRealCoverageSummary(t *testing.T) {
	py := python3(t)
	csv := "query_id,query,rank,score,tool_id,tool_title,tool_text,human_label\n" +
		"q1,a,1,0.70,t1,,,1\n" + // served
		"q1,a,2,0.65,t2,,,0\n" +
		"q2,b,1,0.64,t3,,,0\n" +
		"q2,b,2,0.55,t4,,,1\n" + // below 0.6: not served at 0.6, served with no threshold
		"q3,c,1,0.62,t5,,,1\n" + // served
		"q4,d,1,0.61,t6,,,0\n"
	path := filepath.Join(t.TempDir(), "labels.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(threshold string) map[string]any {
		out, err := exec.Command(py, "real-coverage-sample.py", "summary", "--labels", path, "--threshold", threshold, "--pool", "100").CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return got
	}
	got := run("0.6")
	if got["queries"].(float64) != 4 || got["served"].(float64) != 2 {
		t.Fatalf("at 0.6: %v, want 2 of 4 served", got)
	}
	ci := got["wilson95"].([]any)
	if math.Abs(ci[0].(float64)-0.1500) > 5e-4 || math.Abs(ci[1].(float64)-0.8500) > 5e-4 {
		t.Fatalf("Wilson interval %v, want [0.150, 0.850]", ci)
	}
	if got["expected_in_pool"].(float64) != 50 {
		t.Fatalf("expected in a pool of 100: %v, want 50", got["expected_in_pool"])
	}
	if got := run("0"); got["served"].(float64) != 3 {
		t.Fatalf("with no threshold: %v served, want 3", got["served"])
	}
	bad := filepath.Join(t.TempDir(), "bad.csv")
	if err := os.WriteFile(bad, []byte("query_id,query,rank,score,tool_id,tool_title,tool_text,human_label\nq1,a,1,0.7,t1,,,yes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "real-coverage-sample.py", "summary", "--labels", bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "bad.csv:2: human_label 'yes'") {
		t.Fatalf("a bad label: %v %s, want an error naming the file and line", err, out)
	}
}

// python3 returns the python3 on PATH, or skips the test when there is none.
func python3(t *testing.T) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	return py
}
