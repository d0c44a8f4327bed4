package sim_test

import (
	"fmt"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/sim"
)

// One query served by tools 0 and 1 (the retriever ranks 0 first) and a persistent failure of
// the most frequently relevant third of the catalog (round(3·1/3) = 1 tool; ties in frequency
// go to the lower index, so tool 0) from step 4 on. The static retriever keeps calling tool 0
// and fails from step 4; the blacklist loses step 4 and then calls tool 1; retry (k = 2) falls
// back to tool 1 within each step, at two executions per step from step 4 (4 + 6·2 = 16).
func ExampleRun() {
	w := &sim.World{NumTools: 3, Dim: 1, Queries: []sim.Query{{ID: "q0", Relevant: []int{0, 1},
		Context: []float64{1}, Ranked: []bandit.Candidate{{Tool: 0, Sem: 0.9}, {Tool: 1, Sem: 0.8}, {Tool: 2, Sem: 0.7}}}}}
	stream := sim.Stream(len(w.Queries), 10, 1) // 10 steps, all of the only query
	sc := sim.Scenario{Name: "one down", Theta: 0.9, Events: []sim.Event{{Kind: sim.EventPersistent, Start: 4,
		Select: sim.Selector{By: "frequency", Fraction: 1.0 / 3}}}}
	sched := sim.NewSchedule(sc, w, sim.StreamFrequency(w.NumTools, stream, w.Relevance()), 1)
	fmt.Println("failing tools:", sched.Affected[0])

	for _, spec := range []bandit.Spec{{Name: "static", Kind: "static"}, {Name: "blacklist", Kind: "blacklist"}, {Name: "retry", Kind: "retry", K: 2}} {
		pol, err := sim.NewPolicy(spec, bandit.Env{NumTools: w.NumTools, Dim: w.Dim})
		if err != nil {
			panic(err)
		}
		trace := sim.Run(w, stream, sched, pol, 3, spec.AttemptBudget(), sim.Protocol{Name: "exec", Kind: sim.ProtocolExecution}, 1)
		line, execs := "", 0
		for _, o := range trace {
			line += map[bool]string{true: "1", false: "0"}[o.Success]
			execs += o.Attempts
		}
		fmt.Printf("%-9s %s (%d executions)\n", spec.Name, line, execs)
	}
	// Output:
	// failing tools: [0]
	// static    1111000000 (10 executions)
	// blacklist 1111011111 (10 executions)
	// retry     1111111111 (16 executions)
}
