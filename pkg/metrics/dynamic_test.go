package metrics

import (
	"math"
	"testing"
)

// traceFrom builds a trace from a string: 'S' success, 'R' relevant-but-not-executed miss
// (0 failed attempts), 'F' a failed selection, '2' a retry step with one failure then success.
func traceFrom(s string) []StepOutcome {
	out := make([]StepOutcome, len(s))
	for i, c := range s {
		switch c {
		case 'S':
			out[i] = StepOutcome{Success: true, Attempts: 1}
		case 'R':
			out[i] = StepOutcome{Attempts: 1}
		case 'F':
			out[i] = StepOutcome{Attempts: 1, FailedAttempts: 1}
		case '2':
			out[i] = StepOutcome{Success: true, Attempts: 2, FailedAttempts: 1}
		}
	}
	return out
}

func TestSuccessAndFailedSelectionRates(t *testing.T) {
	cases := []struct {
		trace        string
		w            Window
		sr, fsr, aps float64
	}{
		{"SSSSFFRS", Window{4, 8}, 0.25, 0.5, 1},
		{"SSSSFFRS", Window{0, 8}, 5.0 / 8, 2.0 / 8, 1},
		{"2S2F", Window{0, 4}, 0.75, 3.0 / 6, 1.5},
	}
	for _, c := range cases {
		tr := traceFrom(c.trace)
		sr, err := SuccessRate(tr, c.w)
		if err != nil {
			t.Fatal(err)
		}
		fsr, _ := FailedSelectionRate(tr, c.w)
		aps, _ := AttemptsPerStep(tr, c.w)
		if math.Abs(sr-c.sr) > 1e-12 || math.Abs(fsr-c.fsr) > 1e-12 || math.Abs(aps-c.aps) > 1e-12 {
			t.Errorf("%s %v: sr %v fsr %v aps %v, want %v %v %v", c.trace, c.w, sr, fsr, aps, c.sr, c.fsr, c.aps)
		}
	}
	if _, err := SuccessRate(traceFrom("SS"), Window{1, 3}); err == nil {
		t.Error("window past the end must be refused")
	}
}

func TestRollingSuccessRate(t *testing.T) {
	got := RollingSuccessRate(traceFrom("SFSSF"), 2)
	want := []float64{1, 0.5, 0.5, 1, 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("rolling = %v, want %v", got, want)
		}
	}
}

func TestAdaptationSteps(t *testing.T) {
	// width 4, onset 8. Pre-failure windows end at t=3..7; peak = 1 (SSSS at 0..3).
	cases := []struct {
		name      string
		trace     string
		theta     float64
		recovered bool
		steps     int
	}{
		// Post-onset: first full window is steps 8..11 (t=11): FFSS = 0.5 < 0.9; t=12: FSSS .75;
		// t=13: SSSS = 1 -> AS = 13-11 = 2.
		{"recovers", "SSSSSSSS" + "FFSSSSSS", 0.9, true, 2},
		// Same with theta .5: t=11 already 0.5 >= .5 -> AS 0.
		{"no visible drop", "SSSSSSSS" + "FFSSSSSS", 0.5, true, 0},
		{"never", "SSSSSSSS" + "FSFSFSFS", 0.9, false, 0},
	}
	for _, c := range cases {
		a, err := AdaptationSteps(traceFrom(c.trace), 8, 4, c.theta)
		if err != nil {
			t.Fatal(err)
		}
		if a.Recovered != c.recovered || a.Steps != c.steps || a.Peak != 1 {
			t.Errorf("%s: %+v, want recovered=%v steps=%d peak 1", c.name, a, c.recovered, c.steps)
		}
	}
	// The peak is taken over the windows lying wholly before the onset, from the first full one
	// (width 2, onset 4: windows ending at t = 1, 2, 3), by hand:
	//   FFFS|SFFSFFSS: windows 0, 0, ½ before; the one ending at 4 straddles the onset (SS = 1)
	//   and must not count: peak ½, the first post-onset window (t = 5, SF) ½ → AS 0;
	//   SSFF|FFSS: the first window (t = 1) is the best: peak 1, post-onset t = 5: 0, t = 6: ½,
	//   t = 7: 1 → AS 2.
	for _, c := range []struct {
		trace       string
		peak        float64
		steps       int
		description string
	}{
		{"FFFS" + "SFFSFFSS", 0.5, 0, "a window straddling the onset"},
		{"SSFF" + "FFSS", 1, 2, "the first full window"},
	} {
		a, err := AdaptationSteps(traceFrom(c.trace), 4, 2, 1)
		if err != nil {
			t.Fatal(err)
		}
		if a.Peak != c.peak || !a.Recovered || a.Steps != c.steps {
			t.Errorf("%s (%s): %+v, want peak %v, recovered after %d steps", c.trace, c.description, a, c.peak, c.steps)
		}
	}
	if _, err := AdaptationSteps(traceFrom("SSSS"), 2, 4, 0.9); err == nil {
		t.Error("onset before one full window must be refused")
	}
}

func TestMeanCI95(t *testing.T) {
	// mean 3, sd sqrt(2.5), t(0.975,4) = 2.7764451051977987.
	s := MeanCI95([]float64{1, 2, 3, 4, 5})
	want := 2.7764451051977987 * math.Sqrt(2.5) / math.Sqrt(5)
	if s.Mean != 3 || math.Abs(s.CI95-want) > 1e-9 || s.N != 5 {
		t.Fatalf("MeanCI95 = %+v, want mean 3 ci %v", s, want)
	}
	if one := MeanCI95([]float64{7}); one.Mean != 7 || one.CI95 != 0 {
		t.Fatalf("single sample: %+v", one)
	}
}

func TestPercentile(t *testing.T) {
	// numpy.percentile([1,2,3,4], 95) = 3.85
	if got := Percentile([]float64{4, 1, 3, 2}, 95); math.Abs(got-3.85) > 1e-12 {
		t.Fatalf("P95 = %v", got)
	}
}
