// Package decisionlog is the format of rated's decision logs and their size-rotated JSONL
// files: one line per decision (the query, every candidate with its scores and the logging
// policy's propensities, the chosen tool) and one line per reported outcome (executed, task
// success, latency), joined by the decision id. `rated serve` writes it live and `rated eval
// dynamic --decision-log DIR` writes the same format from the simulator, so off-policy
// evaluation reads either. docs/DECISION-LOG.md documents every field.
package decisionlog

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"time"
)

// Version is the format version written in every record's "v".
const Version = 1

// Record kinds.
const (
	KindDecision = "decision"
	KindOutcome  = "outcome"
)

// Sources of a log.
const (
	SourceServe = "serve"
	SourceSim   = "sim"
)

// Decision is one choice of the logging policy.
type Decision struct {
	V    int    `json:"v"`
	Kind string `json:"kind"`
	// ID identifies the decision; outcome records carry it.
	ID string `json:"id"`
	// Time is the wall-clock time of the decision (absent in simulator logs).
	Time *time.Time `json:"time,omitempty"`
	// T is the policy's step: the router's step clock, or the simulator's stream step.
	T      int64  `json:"t"`
	Source string `json:"source"`
	// Policy is the logging policy's name; Explores says its choices are drawn at random (the
	// propensities are then its action probabilities); a deterministic policy gives its chosen
	// candidate propensity 1 and every other 0.
	Policy   string `json:"policy"`
	Explores bool   `json:"explores"`
	// Retriever names the first stage and Context (optional) is the policy's context vector:
	// base64 of little-endian float32 values, ContextDim of them.
	Retriever  string `json:"retriever,omitempty"`
	Context    string `json:"context,omitempty"`
	ContextDim int    `json:"context_dim,omitempty"`
	Query      Query  `json:"query"`
	// Attempt counts the earlier attempts of the same request (a fallback after a failure);
	// Excluded lists the tools those attempts tried, which the policy could not choose.
	Attempt  int      `json:"attempt"`
	Excluded []string `json:"excluded,omitempty"`
	// Candidates are the retriever's top K, best semantic match first.
	Candidates []Candidate `json:"candidates"`
	// Chosen is the policy's choice and ChosenPosition its index in Candidates.
	Chosen         string `json:"chosen"`
	ChosenPosition int    `json:"chosen_position"`
	// Run identifies the simulator run (absent in live logs).
	Run *Run `json:"run,omitempty"`
	// SelectMS is the router's time to answer, encoding included (live logs only).
	SelectMS float64 `json:"select_ms,omitempty"`
}

// Query is the request a decision answers.
type Query struct {
	ID   string `json:"id,omitempty"`
	Text string `json:"text,omitempty"`
}

// Candidate is one retrieved tool with what the policy saw and scored.
type Candidate struct {
	Tool string `json:"tool"`
	// Semantic is S_sem; Calibrated is P(relevant | retrieval features) from the calibrator
	// (0 without one); Prior is r_static.
	Semantic   float64 `json:"semantic"`
	Calibrated float64 `json:"calibrated"`
	Prior      float64 `json:"prior"`
	// Score, Relevance and Reliability are the policy's parts (bandit.Parts): null when the
	// policy has no such part.
	Score       *float64 `json:"score"`
	Relevance   *float64 `json:"relevance"`
	Reliability *float64 `json:"reliability"`
	Masked      bool     `json:"masked,omitempty"`
	// Propensity is the probability that the logging policy chose this candidate.
	Propensity float64 `json:"propensity"`
	// Rank is the candidate's place in the policy's ranking (0 = chosen, then its fallback
	// order); null when the candidate was excluded or the logger did not rank it (simulator logs
	// of policies without scores rank only the chosen candidate).
	Rank *int `json:"rank"`
}

// Run identifies one simulator run.
type Run struct {
	Protocol string `json:"protocol"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
}

// Outcome is the result of executing one candidate of a decision.
type Outcome struct {
	V    int        `json:"v"`
	Kind string     `json:"kind"`
	ID   string     `json:"id"`
	Time *time.Time `json:"time,omitempty"`
	// T is the policy's step when the outcome was observed.
	T    int64  `json:"t"`
	Tool string `json:"tool"`
	// Position is the tool's index in the decision's Candidates; Chosen says it was the
	// policy's choice (false when an agent walked down the ranking on its own).
	Position int  `json:"position"`
	Chosen   bool `json:"chosen"`
	// Executed is the execution outcome; TaskSuccess the task outcome when one was observed.
	Executed    bool  `json:"executed"`
	TaskSuccess *bool `json:"task_success,omitempty"`
	// LatencyMS is the tool's execution latency as the agent reported it.
	LatencyMS *float64 `json:"latency_ms,omitempty"`
	// Served is the simulator's ground truth: the tool executed and is relevant to the query.
	Served *bool `json:"served,omitempty"`
}

// Float returns a pointer to v, or nil for NaN (a part the policy does not have).
func Float(v float64) *float64 {
	if math.IsNaN(v) {
		return nil
	}
	return &v
}

// Int returns a pointer to v.
func Int(v int) *int { return &v }

// EncodeContext packs a context vector as base64 of little-endian float32 values.
func EncodeContext(x []float64) string {
	buf := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(v)))
	}
	return base64.StdEncoding.EncodeToString(buf)
}

// DecodeContext unpacks EncodeContext's output; dim must match and every value be finite (a
// NaN or infinite feature would poison every policy replayed on it).
func DecodeContext(s string, dim int) ([]float32, error) {
	buf, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("context: %w", err)
	}
	if len(buf) != 4*dim {
		return nil, fmt.Errorf("context: %d bytes for dimension %d", len(buf), dim)
	}
	out := make([]float32, dim)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		if v := float64(out[i]); math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("context[%d] = %v: not a finite number", i, v)
		}
	}
	return out, nil
}
