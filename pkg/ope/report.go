package ope

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Markdown renders estimates as a table with the log's summary and the estimators' validity.
func Markdown(l *Log, files []string, ests []*Estimate) string {
	var b strings.Builder
	iv := func(i Interval) string {
		switch {
		case math.IsNaN(i.Value):
			return "—"
		case math.IsNaN(i.Low):
			return fmt.Sprintf("%.4f (one event: no interval)", i.Value)
		}
		return fmt.Sprintf("%.4f [%.4f, %.4f]", i.Value, i.Low, i.High)
	}
	b.WriteString("| policy | agreement | replay (accepted) | IPS | SNIPS | DR | DM | ESS | unsupported |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, e := range ests {
		fmt.Fprintf(&b, "| %s | %.3f | %s (%d) | %s | %s | %s | %s | %.0f | %d |\n", e.Policy, e.Agreement, iv(e.Replay), e.ReplayAccepted,
			iv(e.IPS), iv(e.SNIPS), iv(e.DR), iv(e.DM), e.ESS, e.Unsupported)
	}
	fmt.Fprintf(&b, "\nValue: the mean reward of the policy's first choice per request, 95%% intervals. The logging policy's own value: %s over %d decisions.\n",
		iv(ests[0].Logged), len(l.Events))
	var pols []string
	for p, n := range l.Policies {
		pols = append(pols, fmt.Sprintf("%s (%d)", p, n))
	}
	sort.Strings(pols)
	fmt.Fprintf(&b, "Log: %d files; logging policies %s; %d of %d decisions drawn at random (explores); smallest propensity %.4g.\n",
		len(files), strings.Join(pols, ", "), l.Exploring, len(l.Events), l.MinPropensity)
	var skipped []string
	for why, n := range l.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d: %s", n, why))
	}
	sort.Strings(skipped)
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Skipped decisions: %s.\n", strings.Join(skipped, "; "))
	}
	if len(l.TornTails) > 0 {
		fmt.Fprintf(&b, "Torn last lines skipped (an interrupted write; the record on it is lost, and a decision whose outcome it held counts as having none): %s.\n", strings.Join(l.TornTails, ", "))
	}
	if l.Exploring < len(l.Events) {
		fmt.Fprintf(&b, "\n**Warning:** %d decisions were made by a deterministic policy (propensity 1 on its choice). There IPS, SNIPS and replay see only the decisions where the target chooses as the log did, and are biased wherever it would choose otherwise (the \"unsupported\" column counts them); DR fills those in from its reward model and is as good as that model. Log with an exploring policy (spec `explore:`) for unbiased estimates: docs/OPE.md.\n",
			len(l.Events)-l.Exploring)
	}
	return b.String()
}
