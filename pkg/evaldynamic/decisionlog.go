package evaldynamic

import (
	"fmt"
	"path/filepath"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/sim"
)

// decisionLoggers writes each run's decisions and outcomes in the decision-log format of
// `rated serve` (pkg/decisionlog) under dir, one file set per run, so simulated and live logs
// are interchangeable.
func decisionLoggers(dir string, b *bench.Bench, retriever string) func(protocol, scenario, policy string, seed uint64) (sim.StepLogger, func() error, error) {
	texts := make(map[string]string, len(b.Queries))
	for _, q := range b.Queries {
		texts[q.ID] = q.Text
	}
	ids := make([]string, len(b.Corpus))
	for i, d := range b.Corpus {
		ids[i] = d.ID
	}
	return func(protocol, scenario, policy string, seed uint64) (sim.StepLogger, func() error, error) {
		prefix := logPrefix(protocol, scenario, policy, seed)
		w, err := decisionlog.Open(filepath.Join(dir), decisionlog.Options{Prefix: prefix})
		if err != nil {
			return nil, nil, err
		}
		l := &simLogger{w: w, ids: ids, texts: texts, retriever: retriever, policy: policy,
			run: &decisionlog.Run{Protocol: protocol, Scenario: scenario, Seed: seed}, prefix: prefix}
		return l, w.Close, nil
	}
}

type simLogger struct {
	w                         *decisionlog.Writer
	ids                       []string
	texts                     map[string]string
	retriever, policy, prefix string
	run                       *decisionlog.Run
	chosen                    int
}

func (l *simLogger) id(s *bandit.Step) string {
	return fmt.Sprintf("%s/%d/%d", l.prefix, s.T, s.Attempt)
}

// Decision implements sim.StepLogger.
func (l *simLogger) Decision(q *sim.Query, s *bandit.Step, pol bandit.Policy, chosen int) error {
	parts, props, explores := bandit.Describe(pol, s, chosen)
	l.chosen = chosen
	rec := &decisionlog.Decision{V: decisionlog.Version, Kind: decisionlog.KindDecision, ID: l.id(s), T: int64(s.T),
		Source: decisionlog.SourceSim, Policy: l.policy, Explores: explores, Retriever: l.retriever,
		Context: decisionlog.EncodeContext(s.Context), ContextDim: len(s.Context),
		Query: decisionlog.Query{ID: q.ID, Text: l.texts[q.ID]}, Attempt: s.Attempt,
		Chosen: l.ids[s.Candidates[chosen].Tool], ChosenPosition: chosen, Run: l.run}
	ranks := make([]*int, len(s.Candidates))
	ranks[chosen] = decisionlog.Int(0)
	if parts != nil {
		// An explaining policy's fallback order: unmasked by score, then masked (bandit.Rank).
		for place, pos := range bandit.Order(s, parts) {
			ranks[pos] = decisionlog.Int(place)
		}
	}
	for i, c := range s.Candidates {
		lc := decisionlog.Candidate{Tool: l.ids[c.Tool], Semantic: c.Sem, Calibrated: c.Relevance, Prior: c.Prior, Propensity: props[i], Rank: ranks[i]}
		if parts != nil {
			lc.Score, lc.Relevance, lc.Reliability, lc.Masked = decisionlog.Float(parts[i].Score), decisionlog.Float(parts[i].Relevance), decisionlog.Float(parts[i].Reliability), parts[i].Masked
		}
		if !s.Allowed(i) {
			rec.Excluded = append(rec.Excluded, l.ids[c.Tool])
		}
		rec.Candidates = append(rec.Candidates, lc)
	}
	return l.w.Write(rec)
}

// Outcome implements sim.StepLogger.
func (l *simLogger) Outcome(_ *sim.Query, s *bandit.Step, pos int, fb bandit.Feedback, served bool) error {
	o := &decisionlog.Outcome{V: decisionlog.Version, Kind: decisionlog.KindOutcome, ID: l.id(s), T: int64(s.T),
		Tool: l.ids[s.Candidates[pos].Tool], Position: pos, Chosen: pos == l.chosen, Executed: fb.Executed, Served: &served}
	if fb.TaskKnown {
		task := fb.Task
		o.TaskSuccess = &task
	}
	return l.w.Write(o)
}
