package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// ModelSettings identify what answers a request: the served model and its weights digest, the
// sampling settings and the server's chat template. With the stage's own settings they are hashed
// into every journal key, so a rerun with any of them changed asks the model again instead of
// reusing answers made under other settings.
type ModelSettings struct {
	Model        string  `json:"model"`
	Digest       string  `json:"model_digest"`
	Temperature  float64 `json:"temperature"`
	MaxTokens    int     `json:"max_tokens"`
	ChatTemplate string  `json:"chat_template"`
}

// settingsTag is the first 12 hex digits of the sha256 of v's JSON.
func settingsTag(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("synth: settings are not JSON: %v", err)) // plain structs of numbers and strings
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:12]
}

// WithModel returns c with JournalTag set from m and every field of c that changes an answer:
// the seed, the queries asked, the length bounds (a rejected answer is asked again with the next
// seed), the prompt style and the prompts.
func (c SynConfig) WithModel(m ModelSettings) SynConfig {
	c.JournalTag = settingsTag(struct {
		M                        ModelSettings
		Seed                     int64
		N, MinWords, MaxWords    int
		Style                    PromptStyle
		Prompt, Instruct, Prefix string
		Stop                     []string
	}{m, c.Seed, c.QueriesPerTool, c.MinWords, c.MaxWords, c.PromptStyle, SynPromptTemplate, SynInstructTemplate, SynAnswerPrefix, SynStop})
	return c
}

// WithModel returns c with JournalTag set from m, the seed, the prompt style and the validator
// prompt.
func (c RealConfig) WithModel(m ModelSettings) RealConfig {
	c.JournalTag = settingsTag(struct {
		M              ModelSettings
		Seed           int64
		Style          PromptStyle
		Prompt, Suffix string
		Stop           []string
	}{m, c.Seed, c.PromptStyle, ValidatorPromptTemplate, ValidatorInstructSuffix, ValidatorStop})
	return c
}

// promptTag is settingsTag of one request's rendered prompt. In a journal key it makes an edited
// tool description or query text ask again: the settings tag covers the templates, not what
// they are filled with.
func promptTag(msgs []Message, stop []string, prefix string) string {
	return settingsTag(struct {
		Messages []Message
		Stop     []string
		Prefix   string
	}{msgs, stop, prefix})
}

// journalKey is SynKey with the settings tag and the prompt's tag:
// "syn@<settings>.<prompt>/n<queries>/<tool id>" (SynKey alone when the settings tag is unset,
// the layout of journals written before settings were part of the key).
func (c SynConfig) journalKey(t catalog.Tool) string {
	if c.JournalTag == "" {
		return SynKey(c.QueriesPerTool, t.ID)
	}
	msgs, stop, prefix := SynMessages(c.PromptStyle, t, c.QueriesPerTool)
	return "syn@" + c.JournalTag + "." + promptTag(msgs, stop, prefix) + strings.TrimPrefix(SynKey(c.QueriesPerTool, t.ID), "syn")
}

// legacyKeys are the keys an earlier layout gave the item: without any tag, and with the
// settings tag but not the prompt's.
func (c SynConfig) legacyKeys(toolID string) []string {
	untagged := SynKey(c.QueriesPerTool, toolID)
	return []string{untagged, "syn@" + c.JournalTag + strings.TrimPrefix(untagged, "syn")}
}

// journalKey is "real@<settings>.<prompt>/<query id>/<tool id>" ("real/…" when the settings
// tag is unset); t is the pair's tool.
func (c RealConfig) journalKey(p RealPair, t catalog.Tool) string {
	if c.JournalTag == "" {
		return realKey(p)
	}
	msgs, stop := ValidatorMessages(c.PromptStyle, p.Query.Text, t)
	return "real@" + c.JournalTag + "." + promptTag(msgs, stop, "") + strings.TrimPrefix(realKey(p), "real")
}

// legacyKeys are the keys earlier layouts gave the pair (see SynConfig.legacyKeys).
func (c RealConfig) legacyKeys(p RealPair) []string {
	untagged := realKey(p)
	return []string{untagged, "real@" + c.JournalTag + strings.TrimPrefix(untagged, "real")}
}

// realPair returns the pair a Real journal key stands for ("/<query id>/<tool id>", the same
// under "real/…" and "real@<tag>/…") and whether key is a Real key at all.
func realPair(key string) (string, bool) {
	if !strings.HasPrefix(key, "real/") && !strings.HasPrefix(key, "real@") {
		return "", false
	}
	return key[strings.Index(key, "/"):], true
}

// LegacyRecords counts the journal's records under an earlier key layout: without a settings
// tag (written before settings were part of the key) or without a prompt tag (before the
// rendered prompt was). They are not reused unless adopted (AdoptLegacy).
func LegacyRecords(j *Journal) int {
	n := 0
	for _, r := range j.Records() {
		if isLegacyKey(r.Key) {
			n++
		}
	}
	return n
}

func isLegacyKey(key string) bool {
	if strings.HasPrefix(key, "syn/") || strings.HasPrefix(key, "real/") {
		return true
	}
	if !strings.HasPrefix(key, "syn@") && !strings.HasPrefix(key, "real@") {
		return false
	}
	head, _, _ := strings.Cut(key, "/")
	return !strings.Contains(head, ".")
}

// adoptLegacy copies the successful legacy record of each job that has none under its own key
// (the first of its legacy keys that has one), for a caller who knows the legacy records were
// made with the current settings and prompts.
func adoptLegacy(j *Journal, jobs []job, legacy func(i int) []string) error {
	for i, jb := range jobs {
		if j.Done(jb.key) {
			continue
		}
		for _, key := range legacy(i) {
			if r, ok := j.Get(key); ok && r.OK {
				r.Key = jb.key
				if err := j.Append(r); err != nil {
					return err
				}
				break
			}
		}
	}
	return nil
}

// CheckSuccess fails when fewer than min of the tools got kept queries: a benchmark built from
// the rest would look complete and be mostly empty. The error names the counts and the faults.
func (s SynStats) CheckSuccess(min float64) error {
	ok := s.ToolsOK - s.ToolsNoQueries
	if s.Tools == 0 || float64(ok) >= min*float64(s.Tools) {
		return nil
	}
	return fmt.Errorf("syn: only %d of %d tools got kept queries (%d failed, %d without a query passing the filters), under --min-success %g; faults: %s%s",
		ok, s.Tools, s.ToolsFailed, s.ToolsNoQueries, min, faultSummary(s.Faults), firstFailure(s.Failures))
}

// CheckSuccess fails when fewer than min of the pairs sent to the validator got a verdict.
func (s RealStats) CheckSuccess(min float64) error {
	asked := s.ValidatedPairs + s.ValidationFailed
	if asked == 0 || float64(s.ValidatedPairs) >= min*float64(asked) {
		return nil
	}
	return fmt.Errorf("real: only %d of %d pairs sent to the validator got a verdict, under --min-success %g; faults: %s%s",
		s.ValidatedPairs, asked, min, faultSummary(s.Faults), firstFailure(s.Failures))
}

func faultSummary(faults map[string]int) string {
	if len(faults) == 0 {
		return "none recorded"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		parts = append(parts, fmt.Sprintf("%s ×%d", k, faults[k]))
	}
	return strings.Join(parts, ", ")
}

func firstFailure(fs []ToolFailure) string {
	if len(fs) == 0 {
		return ""
	}
	return fmt.Sprintf("; first: %s: %s", fs[0].Key, fs[0].Error)
}
