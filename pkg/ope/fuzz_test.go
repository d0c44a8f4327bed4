package ope_test

import (
	"bytes"
	"testing"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/ope"
)

// FuzzParseSpecs: any bytes give specs that validate, or an error; never a panic.
func FuzzParseSpecs(f *testing.F) {
	for _, s := range []string{
		"{name: a, kind: static}",
		"- {name: a, kind: static}\n- {name: o, kind: oracle_task}\n",
		"dynamic: {steps: 3}\npolicies:\n  - {name: r, kind: rated, gamma: 0.9, explore: {kind: softmax, temperature: 0.1}}\n",
		"policies: 3", "- 1", "", "{name: x, kind: static, bogus: 1}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		specs, _, err := ope.ParseSpecs(raw, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, s := range specs {
			if err := s.Validate("x"); err != nil || bandit.IsOracle(s.Kind) {
				t.Fatalf("accepted an invalid spec %+v: %v", s, err)
			}
		}
	})
}

// FuzzReadLog: any decision-log bytes give a log whose events are consistent, or an error.
func FuzzReadLog(f *testing.F) {
	f.Add([]byte(`{"v":1,"kind":"decision","id":"d0","t":0,"source":"sim","policy":"logger","explores":true,"context":"AACAPwAAAAA=","context_dim":2,"query":{},"attempt":0,"candidates":[{"tool":"a","semantic":0.9,"calibrated":0,"prior":0.5,"score":null,"relevance":null,"reliability":null,"propensity":0.8,"rank":null},{"tool":"b","semantic":0.4,"calibrated":0,"prior":0.5,"score":null,"relevance":null,"reliability":null,"propensity":0.2,"rank":null}],"chosen":"a","chosen_position":0}` + "\n" +
		`{"v":1,"kind":"outcome","id":"d0","t":0,"tool":"a","position":0,"chosen":true,"executed":true}` + "\n"))
	f.Add([]byte(`{"v":1,"kind":"decision","id":"x","t":0,"source":"sim","policy":"p","explores":false,"query":{},"attempt":0,"candidates":[{"tool":"a","semantic":1,"calibrated":0,"prior":0,"score":null,"relevance":null,"reliability":null,"propensity":1,"rank":0}],"chosen":"a","chosen_position":0,"context":"AACAPw==","context_dim":1}` + "\n" +
		`{"v":1,"kind":"outcome","id":"x","t":0,"tool":"a","position":0,"chosen":true,"executed":true}` + "\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var recs []decisionlog.Record
		if _, err := decisionlog.Decode(bytes.NewReader(raw), "fuzz", func(r decisionlog.Record) error {
			recs = append(recs, r)
			return nil
		}); err != nil {
			return
		}
		l, err := ope.FromRecords(recs, ope.ReadOptions{})
		if err != nil {
			return
		}
		for _, ev := range l.Events {
			if len(ev.Candidates) != len(ev.Propensity) || ev.Logged < 0 || ev.Logged >= len(ev.Candidates) || len(ev.Context) != l.Dim || ev.Propensity[ev.Logged] <= 0 {
				t.Fatalf("inconsistent event %+v", ev)
			}
		}
		if _, err := ope.Evaluate(l, bandit.Spec{Name: "s", Kind: "static"}, ope.Options{}); err != nil {
			t.Fatal(err)
		}
	})
}
