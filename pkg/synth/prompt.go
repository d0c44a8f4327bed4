package synth

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// The prompts are written as documents to be continued, with one worked example, so that they
// work both with an instruction-tuned model and with a base (pre-trained only) model such as the
// Gemma 3 270M the project installs, which continues a pattern but does not follow bare
// instructions. The instruction text is that of the paper's Figure 2: ask for N realistic queries
// a user would type for the tool, given its name, platform, description and parameters.

// SynPromptTemplate is the EcoAgent-Syn query-generation prompt. {name}, {platform},
// {description}, {parameters} and {n} are filled by SynPrompt. The answer continues the numbered
// list after "1." (SynAnswerPrefix) and stops at a blank line or the next "Tool:".
const SynPromptTemplate = `Below, each tool that an AI assistant can call is followed by {n} different, realistic requests that a user might type to the assistant when they need this tool. The requests vary in wording, situation and level of detail, never mention the tool's name or platform, and are one or two sentences (5 to 120 words) each.

Tool: weather_forecast
Platform: n8n
Description: Returns the current weather and a three-day forecast for a city.
Parameters:
- city (string): name of the city
User requests:
1. What's the weather going to be like in Lisbon this weekend? I'm deciding whether to pack an umbrella.
2. Is it raining in Chicago right now?
3. Give me the forecast for Osaka for the next three days, I fly there on Thursday.

Tool: {name}
Platform: {platform}
Description: {description}
Parameters:
{parameters}
User requests:
1.`

// SynAnswerPrefix is the start of the answer that SynPromptTemplate itself supplies.
const SynAnswerPrefix = "1. "

// SynStop are the stop sequences of the generation request.
var SynStop = []string{"\n\n", "\nTool:"}

// SynPrompt fills SynPromptTemplate for one tool.
func SynPrompt(t catalog.Tool, n int) string {
	return toolReplacer(t, n).Replace(SynPromptTemplate)
}

// synToolBlockTemplate is the part of SynPromptTemplate that describes the tool.
const synToolBlockTemplate = "Tool: {name}\nPlatform: {platform}\nDescription: {description}\nParameters:\n{parameters}"

// toolBlock is the tool's description block as SynPromptTemplate shows it.
func toolBlock(t catalog.Tool) string { return toolReplacer(t, 0).Replace(synToolBlockTemplate) }

// toolReplacer fills the {name}, {platform}, {description}, {parameters} and {n} fields.
func toolReplacer(t catalog.Tool, n int) *strings.Replacer {
	var params []string
	for _, p := range t.Parameters {
		s := "- " + p.Name
		if p.Type != "" {
			s += " (" + p.Type + ")"
		}
		if p.Description != "" {
			s += ": " + oneLine(p.Description)
		}
		params = append(params, s)
	}
	if len(params) == 0 {
		params = []string{"(none declared)"}
	}
	desc := oneLine(t.Description)
	if desc == "" {
		desc = "(no description)"
	}
	return strings.NewReplacer(
		"{name}", t.Name, "{platform}", t.Platform, "{description}", desc,
		"{parameters}", strings.Join(params, "\n"), "{n}", fmt.Sprint(n),
	)
}

// ValidatorPromptTemplate asks for the functional-match score of a (query, tool) pair of
// EcoAgent-Real, with three scored examples; the answer continues after "Score:" and stops at
// the end of the line.
const ValidatorPromptTemplate = `Each example gives a user request, a tool, and a functional match score between 0 and 1 saying how well the tool carries out what the user asks: 1 means the tool does exactly what is needed, 0.5 that it helps with part of it, 0 that it is unrelated.

Request: What's the weather going to be like in Lisbon this weekend?
Tool: weather_forecast: Returns the current weather and a three-day forecast for a city.
Score: 1.0

Request: Translate this paragraph into German for me.
Tool: weather_forecast: Returns the current weather and a three-day forecast for a city.
Score: 0.0

Request: Find flights from Boston to Denver next Friday and book a hotel near the airport.
Tool: flight_search: Searches flights between two airports on a given date.
Score: 0.5

Request: {query}
Tool: {name}: {description}
Score:`

// ValidatorStop are the stop sequences of the validation request.
var ValidatorStop = []string{"\n"}

// ValidatorPrompt fills ValidatorPromptTemplate for one pair.
func ValidatorPrompt(query string, t catalog.Tool) string {
	desc := oneLine(t.Description)
	if desc == "" {
		desc = "(no description)"
	}
	r := strings.NewReplacer("{query}", oneLine(query), "{name}", t.Name, "{description}", desc)
	return r.Replace(ValidatorPromptTemplate)
}

// oneLine collapses whitespace (newlines included) so a field cannot break the prompt's layout,
// and caps very long descriptions at 600 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 600 {
		s = string(r[:600]) + "…"
	}
	return s
}

// synExampleText is the worked example of SynPromptTemplate (tool and queries): a base model
// sometimes copies it instead of writing queries for the tool asked about.
var synExampleText = func() string {
	s := SynPromptTemplate
	return s[strings.Index(s, "Tool: weather_forecast"):strings.Index(s, "Tool: {name}")]
}()

// functionWords are left out when CopiesExample compares vocabularies: they say nothing about
// which tool a query is for (the last line holds the prompt's field labels).
var functionWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if of to in on at for from by with about into over
		is are was were be been being am do does did have has had will would can could should may might
		must shall i me my we our you your he she it its they them their this that these those what
		which who whom whose when where why how s t d ll re ve m not no yes please there here any some
		all just get give tell show find need want like let
		tool platform description parameters user requests string`) {
		functionWords[w] = true
	}
}

// CopiesExample reports whether a generated query was taken from the prompt's worked example
// rather than written for tool t: it shares more content words (word tokens that are not
// function words) with the example than with the tool's name, description and parameters,
// counting only words that are in one of the two and not both.
func CopiesExample(query string, t catalog.Tool) bool {
	ex := contentWords(synExampleText)
	var tb strings.Builder
	tb.WriteString(t.Name + " " + t.Description + " " + t.Platform)
	for _, p := range t.Parameters {
		tb.WriteString(" " + p.Name + " " + p.Description)
	}
	tw := contentWords(tb.String())
	exOnly, toolOnly := 0, 0
	for w := range contentWords(query) {
		switch {
		case ex[w] && !tw[w]:
			exOnly++
		case tw[w] && !ex[w]:
			toolOnly++
		}
	}
	return exOnly > toolOnly
}

func contentWords(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range wordTokens(s) {
		if !functionWords[w] {
			out[w] = true
		}
	}
	return out
}
