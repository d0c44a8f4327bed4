package evaldynamic

import (
	"strings"
	"testing"

	"github.com/spf13/viper"
)

// --steps alone (a flag, here v.Set) compresses the paper's timeline: 10,000 -> 1,000 steps
// divides every step-valued key by 10 (hand-computed from configs/paper.yaml).
func TestStepsAloneScalesTheTimeline(t *testing.T) {
	v := viper.New()
	v.Set("dynamic.steps", 1000)
	cfg, err := LoadConfig(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Dynamic
	if d.Steps != 1000 || d.SummaryFrom != 200 || d.SummaryTo != 500 || d.ASWindow != 20 {
		t.Errorf("dynamic %+v, want steps 1000, summary [200, 500), AS window 20", d)
	}
	for _, sc := range cfg.Scenarios {
		if sc.Onset() != 200 {
			t.Errorf("%s: onset %d, want 200", sc.Name, sc.Onset())
		}
	}
	if cfg.Retrieval.K != 10 || cfg.Dynamic.CurveStride != 10 {
		t.Errorf("keys off the timeline changed: k %d, curve_stride %d", cfg.Retrieval.K, cfg.Dynamic.CurveStride)
	}
}

// The extended scenarios' ends and periods scale too: transient [2000, 3500) -> [500, 875),
// flapping period 100 -> 25 at 2,500 steps.
func TestStepsAloneScalesEventEndsAndPeriods(t *testing.T) {
	file := writeYAML(t, `scenarios:
  - name: transient
    failure_rate: 0.2
    theta: 0.9
    events:
      - {kind: transient, start: 2000, end: 3500, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}
  - name: flapping
    failure_rate: 0.2
    theta: 0.9
    events:
      - {kind: flapping, start: 2000, period: 100, select: {by: frequency, skip_top: 0.1, fraction: 0.2}}
`)
	v := viper.New()
	v.Set("dynamic.steps", 2500)
	cfg, err := LoadConfig(v, []string{file})
	if err != nil {
		t.Fatal(err)
	}
	tr, fl := cfg.Scenarios[0].Events[0], cfg.Scenarios[1].Events[0]
	if tr.Start != 500 || tr.End != 875 || fl.Start != 500 || fl.Period != 25 {
		t.Errorf("transient %+v, flapping %+v", tr, fl)
	}
	if d := cfg.Dynamic; d.SummaryFrom != 500 || d.SummaryTo != 1250 || d.ASWindow != 50 {
		t.Errorf("dynamic %+v", d)
	}
}

// When the timeline itself was also overridden, nothing is scaled, and a timeline that does not
// fit is refused naming the keys to set.
func TestStepsWithAnOverriddenTimelineIsNotScaled(t *testing.T) {
	v := viper.New()
	v.Set("dynamic.steps", 1000)
	v.Set("dynamic.summary_from", 100)
	v.Set("dynamic.summary_to", 900)
	_, err := LoadConfig(v, nil)
	if err == nil || !strings.Contains(err.Error(), "scenarios[0].events[0].start = 2000") {
		t.Errorf("want the event start named, got %v", err)
	}
	// A file that sets steps alone is taken as written: the error names the summary keys.
	file := writeYAML(t, "dynamic:\n  steps: 1000\n")
	_, err = LoadConfig(viper.New(), []string{file})
	if err == nil || !strings.Contains(err.Error(), "dynamic.summary_from/summary_to") {
		t.Errorf("want the summary keys named, got %v", err)
	}
}
