package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// RunInfo describes how a benchmark was built; it heads stats.json and fills DATASHEET.md.
type RunInfo struct {
	Tool        string    `json:"tool"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	CatalogPath string    `json:"catalog"`
	CatalogSize int       `json:"catalog_tools"`
	// ToolsUsed is the number of tools after --tools / --platforms sampling.
	ToolsUsed int `json:"tools_used"`
	// FullCorpus: the corpus is the whole catalog, not only the tools used.
	FullCorpus   bool    `json:"full_corpus"`
	SampleSeed   uint64  `json:"sample_seed"`
	RealQueries  string  `json:"real_queries,omitempty"`
	Model        string  `json:"model"`
	BaseURL      string  `json:"base_url"`
	ModelDigest  string  `json:"model_digest"`
	DigestSource string  `json:"model_digest_source"`
	Temperature  float64 `json:"temperature"`
	MaxTokens    int     `json:"max_tokens"`
	// Seed is the generation seed of the run (--seed, else the config's).
	Seed int64 `json:"seed"`
	// Retriever is the retriever used for hard negatives and Real candidates ("BM25" or
	// "dense:<model>"); RetrieverRequested what was asked for (auto, bm25, dense:<model>);
	// RetrieverChoice why auto chose it; RetrieverModelDir the encoder's model folder.
	Retriever          string      `json:"retriever"`
	RetrieverRequested string      `json:"retriever_requested,omitempty"`
	RetrieverChoice    string      `json:"retriever_choice,omitempty"`
	RetrieverModelDir  string      `json:"retriever_model_dir,omitempty"`
	Syn                *SynConfig  `json:"syn_config,omitempty"`
	Real               *RealConfig `json:"real_config,omitempty"`
}

// Output is everything `rated build-bench` writes.
type Output struct {
	Info RunInfo
	Syn  *SynResult
	Real *RealResult
}

// Write stores the output under dir: syn/ and real/ in the BEIR layout (with catalog.jsonl),
// syn/negatives.jsonl, stats.json and DATASHEET.md, each file atomically.
func (o *Output) Write(dir string) error {
	if o.Syn != nil {
		if err := o.Syn.Bench.Write(filepath.Join(dir, "syn")); err != nil {
			return fmt.Errorf("write syn: %w", err)
		}
		if err := atomicfile.Write(filepath.Join(dir, "syn", "negatives.jsonl"), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetEscapeHTML(false)
			for _, n := range o.Syn.Negatives {
				if err := enc.Encode(n); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if o.Real != nil {
		if err := o.Real.Bench.Write(filepath.Join(dir, "real")); err != nil {
			return fmt.Errorf("write real: %w", err)
		}
	}
	stats := map[string]any{"run": o.Info}
	if o.Syn != nil {
		stats["syn"] = o.Syn.Stats
	}
	if o.Real != nil {
		stats["real"] = o.Real.Stats
	}
	if err := atomicfile.Write(filepath.Join(dir, "stats.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(stats)
	}); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, "DATASHEET.md"), func(w io.Writer) error {
		// The prompts as the run's style sent them (the instruct style has its own Syn prompt
		// and a suffix on the validator's), and the limits the requests set.
		data := map[string]any{"I": o.Info, "Syn": o.Syn, "Real": o.Real,
			"SynPrompt": SynPromptTemplate, "SynContinues": true, "ValidatorPrompt": ValidatorPromptTemplate,
			"ValidatorMaxTokens": ValidatorMaxTokens}
		if o.Info.Syn != nil {
			data["SynMaxTokens"] = SynMaxTokens(o.Info.Syn.QueriesPerTool)
			if o.Info.Syn.PromptStyle == StyleInstruct {
				data["SynPrompt"], data["SynContinues"] = SynInstructTemplate, false
			}
		}
		if o.Info.Real != nil && o.Info.Real.PromptStyle == StyleInstruct {
			data["ValidatorPrompt"] = ValidatorPromptTemplate + ValidatorInstructSuffix
		}
		return datasheet.Execute(w, data)
	})
}

var datasheet = template.Must(template.New("datasheet").Funcs(template.FuncMap{
	"date": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"indent": func(s string) string {
		return "    " + strings.ReplaceAll(s, "\n", "\n    ")
	},
}).Parse(`# Datasheet: EcoAgent benchmarks built by {{.I.Tool}}

Built {{date .I.StartedAt}} – {{date .I.FinishedAt}}.

## Sources
- Tool catalog: ` + "`{{.I.CatalogPath}}`" + ` ({{.I.CatalogSize}} tools; {{.I.ToolsUsed}} used, sampling seed {{.I.SampleSeed}}{{if .I.FullCorpus}}; the corpus is the whole catalog{{end}}).
{{- if .I.RealQueries}}
- Real queries: ` + "`{{.I.RealQueries}}`" + ` (ToolBench, via StableToolBench's solvable test queries; see the provenance file beside it).
{{- end}}

## Model
- Served model: ` + "`{{.I.Model}}`" + ` at {{.I.BaseURL}} (OpenAI-compatible chat completions).
- Weights digest (sha256 of the GGUF): ` + "`{{.I.ModelDigest}}`" + ` ({{.I.DigestSource}}).
- Sampling: temperature {{.I.Temperature}}; max tokens per request{{if .Syn}} {{.SynMaxTokens}} for Syn (48 per query asked + 32){{end}}{{if .Real}}{{if .Syn}},{{end}} {{.ValidatorMaxTokens}} for the Real validator{{end}} (the configuration's max_tokens, {{.I.MaxTokens}}, applies only to requests that set none); each request's seed is derived from the run seed and the item's key, attempt i uses seed+i.
- Retriever for hard negatives{{if .Real}} and Real candidates{{end}}: {{.I.Retriever}}{{if .I.RetrieverModelDir}} (model folder ` + "`{{.I.RetrieverModelDir}}`" + `){{end}}{{if .I.RetrieverRequested}}; requested ` + "`{{.I.RetrieverRequested}}`" + `{{end}}{{if .I.RetrieverChoice}}: {{.I.RetrieverChoice}}{{end}}.
{{if .Syn}}
## EcoAgent-Syn
- Queries per tool asked: {{.I.Syn.QueriesPerTool}}; kept lengths {{.I.Syn.MinWords}}–{{.I.Syn.MaxWords}} words (whitespace-separated).
- Near-duplicates: a query is dropped when the Jaccard similarity of its word set (lower-cased runs of letters and digits) with an earlier kept query is above {{.I.Syn.DedupeThreshold}}.
- Negatives per positive: {{.I.Syn.Negatives.Hard}} hard (best-ranked non-positive tools under the retriever, scanning {{.I.Syn.Negatives.Depth}}) + {{.I.Syn.Negatives.Random}} random (seed {{.I.Syn.NegativeSeed}}).
- Splits by query text {{.I.Syn.SplitNames}} in fractions {{.I.Syn.SplitFractions}}, split seed {{.I.Syn.SplitSeed}}; generation seed {{.I.Syn.Seed}}.
- Counts: {{.Syn.Stats.ToolsOK}} of {{.Syn.Stats.Tools}} tools generated ({{.Syn.Stats.ToolsFailed}} failed), {{.Syn.Stats.QueriesParsed}} queries parsed, {{.Syn.Stats.DroppedTooShort}} too short, {{.Syn.Stats.DroppedTooLong}} too long, {{.Syn.Stats.DroppedCopiedExample}} copied from the prompt's example, {{.Syn.Stats.DroppedNearDup}} near-duplicates; {{.Syn.Stats.Queries}} queries, {{.Syn.Stats.PositivePairs}} positive and {{.Syn.Stats.NegativePairs}} negative pairs. Splits: {{.Syn.Stats.QueriesPerSplit}}.

Prompt (the tool's fields are filled in{{if .SynContinues}}; the model continues the list after "1."{{else}}; sent as a chat message, the model answers with a numbered list{{end}}):

{{indent .SynPrompt}}
{{end}}
{{- if .Real}}
## EcoAgent-Real
- Candidates: top {{.I.Real.TopK}} tools per query under {{.Real.Stats.Retriever}} (scores: {{.Real.Stats.RetrievalScoreScale}}); pairs scoring below {{.I.Real.MinRetrievalScore}} dropped{{if eq .Real.Stats.RetrievalScoreScale "cosine"}} (the paper: cosine 0.7 with GTE-Large){{else}} (0 keeps every candidate: BM25 scores have no fixed scale){{end}}. Top-{{.I.Real.TopK}} scores: median {{printf "%.3f" (index .Real.Stats.RetrievalScores.Quant "p50")}}, p10 {{printf "%.3f" (index .Real.Stats.RetrievalScores.Quant "p10")}}, p90 {{printf "%.3f" (index .Real.Stats.RetrievalScores.Quant "p90")}} (histogram and the pairs each threshold step removes in stats.json).
- Validator: the model above scores the functional match in [0, 1]; pairs at or above {{.I.Real.KeepScore}} are kept. Seed {{.I.Real.Seed}}.
- Near-duplicate queries (Jaccard > {{.I.Real.DedupeThreshold}}) removed; splits {{.I.Real.SplitNames}} (dev is the validation split) in fractions {{.I.Real.SplitFractions}}, split seed {{.I.Real.SplitSeed}}.
- Counts: {{.Real.Stats.InputQueries}} input queries, {{.Real.Stats.CandidatePairs}} candidate pairs, {{.Real.Stats.DroppedLowScore}} below the retrieval threshold, {{.Real.Stats.ValidatedPairs}} validated ({{.Real.Stats.ValidationFailed}} failed), {{.Real.Stats.DroppedByValidator}} rejected by the validator; {{.Real.Stats.Queries}} queries and {{.Real.Stats.VerifiedPairs}} verified pairs. Splits: {{.Real.Stats.QueriesPerSplit}}.

Validator prompt:

{{indent .ValidatorPrompt}}
{{end}}
## Known limits
- The validator's verdicts have not been checked by a person unless an audit (` + "`rated build-bench audit`" + `) is reported beside this file.
- Queries are written by a small local model; their quality bounds what a retriever can learn from them.
`))

// FileSHA256 returns the hex SHA-256 of a file (the digest recorded for the model weights).
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
