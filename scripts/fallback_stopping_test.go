package scripts

import (
	"os/exec"
	"strings"
	"testing"
)

// TestFallbackStoppingReplay checks fallback-stopping.py on a hand-made Retry log of four steps
// (one before the window):
//
//	A: X (cal 0.6) fails, Y (0.35) executes and serves
//	B: X fails, Z (0.2) fails, W (0.1) executes and serves
//	C: V (0.7) executes and serves
//
// Retry (k=1) serves 1 of 3 at 1 attempt; (k=2) 2 of 3 at 5/3; (k=3) 3 of 3 at 2; stopping below
// a calibrated 0.3 cuts B after its first failure: 2 of 3 at 4/3 attempts.
func TestFallbackStoppingReplay(t *testing.T) {
	py := python3(t)
	var log retryLog
	walk := func(step int, tries []retryCandidate, executed int) { log.walk(step, "q", tries, executed, true) }
	walk(1999, []retryCandidate{{"X", 0.6}, {"Y", 0.35}}, 1) // before the window
	walk(2000, []retryCandidate{{"X", 0.6}, {"Y", 0.35}}, 1)
	walk(2001, []retryCandidate{{"X", 0.6}, {"Z", 0.2}, {"W", 0.1}}, 2)
	walk(2002, []retryCandidate{{"V", 0.7}}, 0)
	dir := t.TempDir()
	log.write(t, dir)
	out, err := exec.Command(py, "fallback-stopping.py", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"3 steps of 1 runs",
		"Retry (k=1) | 33.33% | 1.000",
		"Retry (k=2) | 66.67% | 1.667",
		"Retry (k=3) | 100.00% | 2.000",
		"cal < 0.3 | 66.67% | 1.333",
		"cal < 0.1 | 100.00% | 2.000",
		// Per-attempt thresholds: only stopping A and B at their second attempt (t2 above Y's
		// 0.35, first on the grid at 0.375) stays within 1.10 attempts: 1 of 3 at 1.000. Under
		// cal*p, Y never failed (p 1), so the same threshold is needed.
		"cal < (t2, t3) | 33.33% (0.375, 0.0; 1.000)",
		"cal*p < (t2, t3) | 33.33% (0.375, 0.0; 1.000)",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
