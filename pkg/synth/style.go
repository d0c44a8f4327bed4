package synth

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// PromptStyle says how the prompts are put to the model: as a document a base model continues
// ("continuation", the default, for the Gemma 3 270M base model), or as an instruction with one
// worked exchange for an instruction-tuned model served with its chat template ("instruct").
// Both styles carry the same fields. The instruction has no worked example: with one (the
// continuation prompt's weather tool as a first exchange), Qwen2.5-Coder-0.5B wrote weather
// requests for most tools in a trial on the crawled catalog; and it asks for first-person
// messages without code, since the two coder models otherwise wrote how-to questions about the
// API or steps of a script (docs/BUILD-BENCH.md, "Choosing the generator").
type PromptStyle string

// The prompt styles.
const (
	StyleContinuation PromptStyle = "continuation"
	StyleInstruct     PromptStyle = "instruct"
)

// ParsePromptStyle reads a prompt_style value; empty means continuation.
func ParsePromptStyle(s string) (PromptStyle, error) {
	switch PromptStyle(s) {
	case "", StyleContinuation:
		return StyleContinuation, nil
	case StyleInstruct:
		return StyleInstruct, nil
	}
	return "", fmt.Errorf("prompt_style %q: want %q or %q", s, StyleContinuation, StyleInstruct)
}

// SynInstructTemplate is the EcoAgent-Syn instruction for an instruction-tuned model: the
// paper's Figure 2 (N realistic requests a user would type for the tool), with {tool} the same
// Tool/Platform/Description/Parameters block as SynPromptTemplate's.
const SynInstructTemplate = `You help build a test set for an AI assistant that can call tools. Below is one tool. Write {n} different messages that a user might send to the assistant when they need this tool's job done. Each message is one or two sentences in the first person, asks for the task itself with concrete made-up details (names, dates, places, amounts, IDs), and never names the tool, the platform, an API or a programming language. Do not write code or explain anything.

{tool}

Answer with a numbered list of the {n} messages only.`

// ValidatorInstructSuffix turns ValidatorPromptTemplate into an instruction: the examples stay,
// the model is asked for the last score only.
const ValidatorInstructSuffix = "\n\nWhat is the score of this last example? Answer with the number only."

// SynMessages is the generation request for tool t asking for n queries in the given style:
// the messages, the stop sequences and the answer prefix the prompt itself supplies.
func SynMessages(style PromptStyle, t catalog.Tool, n int) ([]Message, []string, string) {
	if style != StyleInstruct {
		return []Message{{Role: "user", Content: SynPrompt(t, n)}}, SynStop, SynAnswerPrefix
	}
	ask := strings.NewReplacer("{n}", fmt.Sprint(n), "{tool}", toolBlock(t)).Replace(SynInstructTemplate)
	return []Message{{Role: "user", Content: ask}}, nil, ""
}

// ValidatorMessages is the validation request for one (query, tool) pair in the given style:
// the messages and the stop sequences.
func ValidatorMessages(style PromptStyle, query string, t catalog.Tool) ([]Message, []string) {
	p := ValidatorPrompt(query, t)
	if style != StyleInstruct {
		return []Message{{Role: "user", Content: p}}, ValidatorStop
	}
	return []Message{{Role: "user", Content: p + ValidatorInstructSuffix}}, ValidatorStop
}
