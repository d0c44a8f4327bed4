package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFallbackPlansByHand checks fallback-plans.py on a hand-made Retry log (p = 0.3 for a
// flaky tool):
//
//	A (query qa, relevant X): X (cal 0.6) fails, so X is flaky; then Y (0.35) executes
//	B (query qb, relevant W): V (0.7) executes; W (0.2) is never tried
//
// and the same A once before the window. Exactly over the coins: Retry (k=1) succeeds 0.3 in A
// and 0 in B (V runs, not relevant): 15% at 1 attempt; (k=2) the same 15%, at 1.7 attempts in A
// and 1 in B: 1.35. Knowing relevance, A tries X alone (0.3 at 1 attempt) and B tries W alone
// (1 at 1): 65% at 1.000. With the calibrated estimate, λ = 0.1 keeps both candidates of each
// step (X: 0.6 − 0.1/0.3 > 0 before Y: 0.35 − 0.1): 15% at 1.35 attempts, and λ = 0.15 puts Y
// before X (0.2 > 0.1), which runs: 0% at 1; mixing the two at 1.15 attempts: 15%·0.15/0.35 =
// 6.43%. Cross-fitted by rank, qa (fold 1) is planned with qb's counts (fold 0): rank 0 not
// relevant, (0 + ¼)/(1 + ½) = 1/6, rank 1 relevant, 5/6, so Y goes first and runs; qb with qa's,
// V (5/6) first, which runs: 0% at 1.000 for every λ. In-sample, every candidate's key (rank,
// flakiness, calibrated tenth) is its own, so the estimate is its relevance, 5/6 or 1/6: at λ = 0
// A tries X then Y (0.3 at 1.7) and B tries W first (1 at 1): 65% at 1.35. Cross-fitted by tool
// (or by rank, flakiness and calibrated tenth, whose keys the other fold never has either), qa's
// X and Y are unseen in qb's fold and qb's V and W in qa's, so every estimate is the prior ½: at
// λ = 0 the tie keeps the order (X then Y in A, 0.3 at 1.7; V in B, which runs: 0 at 1), 15% at
// 1.35; at λ = 0.005 Y (½ − 0.005) goes before the flaky X (½ − 0.005/0.3) and runs: 0% at 1;
// mixed at 1.15 attempts, 6.43% as above.
func TestFallbackPlansByHand(t *testing.T) {
	py := python3(t)
	var log retryLog
	a := []retryCandidate{{"X", 0.6}, {"Y", 0.35}}
	log.walk(1999, "qa", a, 1, false) // before the window
	log.walk(2000, "qa", a, 1, false)
	log.walk(2001, "qb", []retryCandidate{{"V", 0.7}, {"W", 0.2}}, 0, false)
	dir := t.TempDir()
	logs := filepath.Join(dir, "log")
	if err := os.Mkdir(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	log.write(t, logs)
	qrels := filepath.Join(dir, "qrels.tsv")
	if err := os.WriteFile(qrels, []byte("query-id\tcorpus-id\tscore\nqa\tX\t1\nqb\tW\t1\nqb\tV\t0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "fallback-plans.py", "--cap", "2", logs, qrels).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if label, _, ok := strings.Cut(line, " | "); ok {
			rows[label] = line
		}
	}
	for label, wants := range map[string][]string{
		"Retry (k=1)":          {"| 15.00% | 1.000"},
		"Retry (k=2)":          {"| 15.00% | 1.350"},
		"knows relevance":      {"| 65.00% |"},
		"calibrated":           {"| 6.43% |", "0.1: 15.00%, 1.350", "0.15: 0.00%, 1.000"},
		"rank (other queries)": {"| 0.00% |", "| 0: 0.00%, 1.000;"},
		"rank, flaky, calibrated tenth (same queries)":  {"| 0: 65.00%, 1.350;"},
		"tool (other queries)":                          {"| 6.43% |", "| 0: 15.00%, 1.350; 0.005: 0.00%, 1.000;"},
		"rank, flaky, calibrated tenth (other queries)": {"| 6.43% |", "| 0: 15.00%, 1.350; 0.005: 0.00%, 1.000;"},
	} {
		for _, want := range wants {
			if !strings.Contains(rows[label], want) {
				t.Errorf("row %q lacks %q:\n%s", label, want, out)
			}
		}
	}
	if !strings.Contains(string(out), "2 steps of 1 runs") {
		t.Errorf("output lacks the step count:\n%s", out)
	}
	// A qrels line with a missing column names the file and line.
	if err := os.WriteFile(qrels, []byte("qa\tX\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(py, "fallback-plans.py", logs, qrels).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "qrels.tsv:1: want query-id, corpus-id, score") {
		t.Errorf("bad qrels accepted or not located: %v\n%s", err, out)
	}
}
