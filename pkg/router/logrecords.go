package router

import (
	"time"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// decisionRecord is the decision-log line of a Select.
func (r *Router) decisionRecord(d *decision, found []retrieve.Candidate, rank bandit.Ranking, start time.Time) *decisionlog.Decision {
	when := d.created.UTC()
	rec := &decisionlog.Decision{
		V: decisionlog.Version, Kind: decisionlog.KindDecision, ID: d.id, Time: &when, T: d.step.t,
		Source: decisionlog.SourceServe, Policy: r.spec.Name, Explores: rank.Explores, Retriever: r.front.Name(),
		Query: decisionlog.Query{Text: d.query}, Attempt: d.step.attempt,
		Chosen: found[d.chosen].ID, ChosenPosition: d.chosen,
		SelectMS: float64(r.clock().Sub(start)) / float64(time.Millisecond),
	}
	if r.cfg.LogContext {
		x := make([]float64, len(d.step.context))
		for i, v := range d.step.context {
			x[i] = float64(v)
		}
		rec.Context, rec.ContextDim = decisionlog.EncodeContext(x), len(x)
	}
	ranks := make([]*int, len(found))
	for place, pos := range rank.Order {
		ranks[pos] = decisionlog.Int(place)
	}
	for i, c := range d.step.cands {
		lc := decisionlog.Candidate{Tool: found[i].ID, Semantic: c.Sem, Calibrated: c.Relevance, Prior: c.Prior,
			Propensity: rank.Propensity[i], Rank: ranks[i]}
		if rank.Parts != nil {
			p := rank.Parts[i]
			lc.Score, lc.Relevance, lc.Reliability, lc.Masked = decisionlog.Float(p.Score), decisionlog.Float(p.Relevance), decisionlog.Float(p.Reliability), p.Masked
		}
		if d.step.excluded[i] {
			rec.Excluded = append(rec.Excluded, found[i].ID)
		}
		rec.Candidates = append(rec.Candidates, lc)
	}
	return rec
}

// outcomeRecord is the decision-log line of a durable report.
func (r *Router) outcomeRecord(rec *reportRecord, tool string, chosen bool) *decisionlog.Outcome {
	when := r.clock().UTC()
	o := &decisionlog.Outcome{V: decisionlog.Version, Kind: decisionlog.KindOutcome, ID: rec.decision, Time: &when, T: rec.t,
		Tool: tool, Position: rec.pos, Chosen: chosen, Executed: rec.fb.Executed, LatencyMS: decisionlog.Float(rec.latency)}
	if rec.fb.TaskKnown {
		task := rec.fb.Task
		o.TaskSuccess = &task
	}
	return o
}
