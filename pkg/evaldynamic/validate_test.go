package evaldynamic

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/spf13/viper"

	"github.com/rated-dev/rated/pkg/bench"
)

// TestImpossibleValuesAreRefusedBeforeWork (issue 16): values that used to run the whole job (and
// then fail in JSON encoding) or to run with a silently wrong meaning are refused by LoadConfig,
// naming the key.
func TestImpossibleValuesAreRefusedBeforeWork(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{"policies:\n  - {name: x, kind: rated, alpha: .inf, gamma: 0.9}\n", "policies[0].alpha"},
		{"dynamic:\n  bound_attempts: [0.5]\n", "dynamic.bound_attempts[0]"},
		{"dynamic:\n  bound_attempts: [1.15]\n", "dynamic.bound_attempts: the bounds come from oracle_fallback"},
		{"policies:\n  - {name: x, kind: global_mab, alpha: .nan}\n", "policies[0].alpha"},
		{"policies:\n  - {name: x, kind: batch_grpo, temperature: .inf}\n", "policies[0].temperature"},
		{"prior:\n  source_weights: {official: 1.0, langchain: -0.5, other: 0.6}\n", "prior.source_weights.langchain"},
		{"prior:\n  source_weights: {official: 1.0, langchain: 1.5, other: 0.6}\n", "prior.source_weights.langchain"},
		{"prior:\n  source_weights: {official: .nan, other: 0.6}\n", "prior.source_weights.official"},
		{"retrieval:\n  tau: -1\n", "retrieval.tau"},
		{"retrieval:\n  tau: 0\n", "retrieval.tau"},
		{"fusion:\n  semantic: .inf\n", "fusion.semantic"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: .nan, events: [{kind: persistent, start: 2000, select: {by: frequency, fraction: 0.2}}]}\n", "scenarios[0].theta"},
		{"scenarios:\n  - {name: s, failure_rate: 0.2, theta: 0.9, events: [{kind: flaky, start: 2000, success_prob: .nan, select: {by: frequency, fraction: 0.2}}]}\n", "scenarios[0].events[0].success_prob"},
	}
	for _, c := range cases {
		_, err := LoadConfig(viper.New(), []string{writeYAML(t, c.yaml)})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to name %q", c.yaml, err, c.want)
		}
	}
}

// TestAllZeroGradesAreRefused (issue 16): a split whose qrels hold no relevant tool (every grade
// 0) cannot measure success; eval dynamic used to report SR 0.0% and "AS 0 ± 0" for every
// policy instead of refusing, as eval offline does.
func TestAllZeroGradesAreRefused(t *testing.T) {
	b, err := bench.Read(fstest.MapFS{
		"corpus.jsonl":   {Data: []byte(`{"_id":"t1","title":"slack","text":"post a message"}` + "\n" + `{"_id":"t2","title":"mail","text":"send an email"}` + "\n")},
		"queries.jsonl":  {Data: []byte(`{"_id":"q1","text":"post to slack"}` + "\n" + `{"_id":"q2","text":"send mail"}` + "\n")},
		"qrels/test.tsv": {Data: []byte("q1\tt1\t0\nq2\tt2\t0\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(viper.New(), []string{writeYAML(t, small)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := LexicalResources(b, "zeros", cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = BuildWorld(res, cfg)
	if err == nil || !strings.Contains(err.Error(), `split "test"`) || !strings.Contains(err.Error(), "grade > 0") {
		t.Fatalf("error %v, want a refusal naming the split and the grades", err)
	}
}
