package ope_test

import (
	"fmt"
	"strconv"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/decisionlog"
	"github.com/rated-dev/rated/pkg/ope"
)

// A logging policy chose uniformly between two tools (propensity 0.5 each) on four requests;
// what would the static retriever, which always runs the top candidate, have scored?
//
// The target agrees with the log on events 0, 1 and 3 (logged position 0), with importance
// weight w = 1/0.5 = 2 there and 0 on event 2. By hand:
//
//	logged = (1 + 0 + 0 + 1) / 4          = 0.500
//	IPS    = (2·1 + 2·0 + 0 + 2·1) / 4    = 1.000
//	SNIPS  = (2·1 + 2·0 + 2·1) / (2+2+2)  = 0.667
//	replay = mean reward of the agreeing events, each accepted with probability
//	         min propensity / propensity = 1:  (1 + 0 + 1) / 3 = 0.667
func ExampleEvaluate() {
	positions, executed := []int{0, 0, 1, 0}, []bool{true, false, false, true}
	tools := []string{"weather.get", "weather.scrape"}
	var recs []decisionlog.Record
	for t, pos := range positions {
		id := "d" + strconv.Itoa(t)
		recs = append(recs, decisionlog.Record{Decision: &decisionlog.Decision{
			V: decisionlog.Version, Kind: decisionlog.KindDecision, ID: id, T: int64(t), Policy: "uniform", Explores: true,
			Context: decisionlog.EncodeContext([]float64{1, 0}), ContextDim: 2,
			Candidates: []decisionlog.Candidate{
				{Tool: tools[0], Semantic: 0.9, Propensity: 0.5},
				{Tool: tools[1], Semantic: 0.7, Propensity: 0.5}},
			Chosen: tools[pos], ChosenPosition: pos,
		}}, decisionlog.Record{Outcome: &decisionlog.Outcome{
			V: decisionlog.Version, Kind: decisionlog.KindOutcome, ID: id, T: int64(t),
			Tool: tools[pos], Position: pos, Chosen: true, Executed: executed[t],
		}})
	}
	l, err := ope.FromRecords(recs, ope.ReadOptions{})
	if err != nil {
		panic(err)
	}
	est, err := ope.Evaluate(l, bandit.Spec{Name: "static", Kind: "static"}, ope.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("logged %.3f IPS %.3f SNIPS %.3f replay %.3f (%d accepted)\n",
		est.Logged.Value, est.IPS.Value, est.SNIPS.Value, est.Replay.Value, est.ReplayAccepted)
	// Output:
	// logged 0.500 IPS 1.000 SNIPS 0.667 replay 0.667 (3 accepted)
}
