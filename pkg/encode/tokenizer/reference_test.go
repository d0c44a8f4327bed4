package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rated-dev/rated/internal/testassets"
)

// refJob is one job for testdata/reference.py.
type refJob struct {
	Tokenizer string `json:"tokenizer"`
	Mode      string `json:"mode"`  // encode, batch or file
	Input     string `json:"input"` // name of a list of texts or pairs in refInputs
	MaxLength int    `json:"max_length"`
	BatchSize int    `json:"batch_size,omitempty"`
}

// refInputs are the named input lists the jobs refer to (each sent once).
type refInputs map[string]any

// refResult is the reference output of one job: [ids, type_ids, attention_mask] per input.
type refResult struct {
	VocabSize int        `json:"vocab_size"`
	Encodings [][3][]int `json:"encodings"`
}

// runReference runs the reference `tokenizers` library once over all jobs.
func runReference(t *testing.T, inputs refInputs, jobs []refJob) []refResult {
	t.Helper()
	python := testassets.Python(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "jobs.json"), filepath.Join(dir, "out.json")
	data, err := json.Marshal(map[string]any{"inputs": inputs, "jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "reference.py"), in, out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("reference tokenizers failed: %v\n%s", err, stderr.String())
	}
	data, err = os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []refResult `json:"results"`
	}
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("reading reference output: %v", err)
	}
	if len(res.Results) != len(jobs) {
		t.Fatalf("reference returned %d results for %d jobs", len(res.Results), len(jobs))
	}
	return res.Results
}

// deriveVariant writes a copy of a tokenizer.json whose BertNormalizer has the given
// lowercase and strip_accents settings (same vocabulary), e.g. a cased BERT tokenizer.
func deriveVariant(t *testing.T, path, name string, lowercase, stripAccents bool) string {
	t.Helper()
	return deriveWith(t, path, name, func(doc map[string]any) {
		norm, ok := doc["normalizer"].(map[string]any)
		if !ok || norm["type"] != "BertNormalizer" {
			t.Fatalf("%s: normalizer is not a BertNormalizer", path)
		}
		norm["lowercase"] = lowercase
		norm["strip_accents"] = stripAccents
	})
}

// deriveWith writes a copy of a tokenizer.json changed by edit.
func deriveWith(t *testing.T, path, name string, edit func(doc map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	edit(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// quote shortens an input for failure messages.
func quote(s string) string {
	if len(s) > 160 {
		return fmt.Sprintf("%q… (%d bytes)", s[:160], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// mismatches collects differences between Go and the reference, reporting the first few.
type mismatches struct {
	t     *testing.T
	count int
	total int
}

func (m *mismatches) check(input string, ids, types, mask []int, want [3][]int) {
	m.total++
	if slices.Equal(ids, want[0]) && slices.Equal(types, want[1]) && slices.Equal(mask, want[2]) {
		return
	}
	m.count++
	if m.count <= 8 {
		m.t.Errorf("input %s:\n  go   ids %v types %v mask %v\n  want ids %v types %v mask %v",
			quote(input), clip(ids), clip(types), clip(mask), clip(want[0]), clip(want[1]), clip(want[2]))
	}
}

// clip shortens a long id list for failure messages.
func clip(v []int) string {
	if len(v) > 40 {
		return fmt.Sprintf("%v … (%d)", v[:40], len(v))
	}
	return fmt.Sprint(v)
}

func (m *mismatches) done() {
	if m.count > 0 {
		m.t.Errorf("%d of %d encodings differ from the reference", m.count, m.total)
	}
	if m.total == 0 {
		m.t.Error("nothing compared")
	}
}

func loadOrFail(t *testing.T, path string) *Tokenizer {
	t.Helper()
	tk, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func pairInput(p [2]string) string { return p[0] + " ‖ " + p[1] }

func int64sToInts(v []int64) []int {
	out := make([]int, len(v))
	for i, x := range v {
		out[i] = int(x)
	}
	return out
}

// TestReference compares Go against the reference Python `tokenizers` over at least 5,000 varied
// strings (and pairs) for real uncased tokenizers and a cased variant, at several maximum
// lengths, plus every code point of planes 0–3 and 14 under four normaliser settings: ids, type
// ids and attention masks must be identical.
func TestReference(t *testing.T) {
	bge := filepath.Join(testassets.Model(t, "bge-small-en-v1.5"), "tokenizer.json")
	minilm := filepath.Join(testassets.Model(t, "all-minilm-l6-v2"), "tokenizer.json")
	testassets.Python(t)
	cased := deriveVariant(t, bge, "cased", false, false)
	// Left truncation and left padding to a fixed length rounded up to a multiple, from the file.
	left := deriveWith(t, minilm, "left", func(doc map[string]any) {
		doc["truncation"] = map[string]any{"direction": "Left", "max_length": 100, "strategy": "LongestFirst", "stride": 0}
		doc["padding"] = map[string]any{"strategy": map[string]any{"Fixed": 50}, "direction": "Left",
			"pad_to_multiple_of": 16, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"}
	})

	corpus := buildCorpus(t, 42)
	if len(corpus) < 5000 {
		t.Fatalf("corpus has %d strings, want ≥ 5000", len(corpus))
	}
	pairs := buildPairs(t, corpus, 7)
	sweep := sweepTexts()

	type check struct {
		name string
		job  refJob
		run  func(t *testing.T, res refResult)
	}
	var checks []check
	variants := []struct{ name, path string }{{"bge-small-en-v1.5", bge}, {"all-minilm-l6-v2", minilm}, {"cased", cased}}
	for _, v := range variants {
		v := v
		for _, maxLen := range []int{0, 16, 128} {
			checks = append(checks, check{
				name: fmt.Sprintf("%s/single/max%d", v.name, maxLen),
				job:  refJob{Tokenizer: v.path, Mode: "encode", MaxLength: maxLen, Input: "corpus"},
				run: func(t *testing.T, res refResult) {
					tk := loadOrFail(t, v.path)
					if err := tk.SetTruncation(maxLen); err != nil {
						t.Fatal(err)
					}
					if err := tk.SetPadding(0); err != nil {
						t.Fatal(err)
					}
					if tk.VocabSize() != res.VocabSize {
						t.Errorf("VocabSize %d, reference %d", tk.VocabSize(), res.VocabSize)
					}
					m := mismatches{t: t}
					for i, text := range corpus {
						enc := tk.Encode(text)
						m.check(text, enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
					}
					m.done()
				},
			})
		}
		for _, maxLen := range []int{0, 24, 128} {
			checks = append(checks, check{
				name: fmt.Sprintf("%s/pair/max%d", v.name, maxLen),
				job:  refJob{Tokenizer: v.path, Mode: "encode", MaxLength: maxLen, Input: "pairs"},
				run: func(t *testing.T, res refResult) {
					tk := loadOrFail(t, v.path)
					if err := tk.SetTruncation(maxLen); err != nil {
						t.Fatal(err)
					}
					if err := tk.SetPadding(0); err != nil {
						t.Fatal(err)
					}
					m := mismatches{t: t}
					for i, p := range pairs {
						enc := tk.EncodePair(p[0], p[1])
						m.check(pairInput(p), enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
					}
					m.done()
				},
			})
		}
		for _, maxLen := range []int{0, 64} {
			checks = append(checks, check{
				name: fmt.Sprintf("%s/batch/max%d", v.name, maxLen),
				job:  refJob{Tokenizer: v.path, Mode: "batch", MaxLength: maxLen, BatchSize: 32, Input: "corpus"},
				run: func(t *testing.T, res refResult) {
					tk := loadOrFail(t, v.path)
					// maxLen 0 keeps the tokenizer's own truncation: disable it like the reference job.
					if err := tk.SetTruncation(0); err != nil {
						t.Fatal(err)
					}
					m := mismatches{t: t}
					for start := 0; start < len(corpus); start += 32 {
						chunk := corpus[start:min(start+32, len(corpus))]
						b := tk.EncodeBatch(chunk, maxLen)
						if b.BatchSize != len(chunk) || len(b.InputIDs) != b.BatchSize*b.SeqLen {
							t.Fatalf("batch shape %d×%d for %d texts, %d ids", b.BatchSize, b.SeqLen, len(chunk), len(b.InputIDs))
						}
						for r := range chunk {
							row := func(v []int64) []int { return int64sToInts(v[r*b.SeqLen : (r+1)*b.SeqLen]) }
							m.check(chunk[r], row(b.InputIDs), row(b.TokenTypeIDs), row(b.AttentionMask), res.Encodings[start+r])
						}
					}
					m.done()
				},
			})
		}
		checks = append(checks, check{
			name: v.name + "/pair-batch/max48",
			job:  refJob{Tokenizer: v.path, Mode: "batch", MaxLength: 48, BatchSize: 16, Input: "pairs"},
			run: func(t *testing.T, res refResult) {
				tk := loadOrFail(t, v.path)
				m := mismatches{t: t}
				for start := 0; start < len(pairs); start += 16 {
					chunk := pairs[start:min(start+16, len(pairs))]
					var first, second []string
					for _, p := range chunk {
						first, second = append(first, p[0]), append(second, p[1])
					}
					b := tk.EncodePairBatch(first, second, 48)
					for r := range chunk {
						row := func(v []int64) []int { return int64sToInts(v[r*b.SeqLen : (r+1)*b.SeqLen]) }
						m.check(pairInput(chunk[r]), row(b.InputIDs), row(b.TokenTypeIDs), row(b.AttentionMask), res.Encodings[start+r])
					}
				}
				m.done()
			},
		})
		fileTexts := corpus[:1500]
		checks = append(checks, check{
			name: v.name + "/file-config",
			job:  refJob{Tokenizer: v.path, Mode: "file", Input: "file"},
			run: func(t *testing.T, res refResult) {
				tk := loadOrFail(t, v.path)
				m := mismatches{t: t}
				for i, text := range fileTexts {
					enc := tk.Encode(text)
					m.check(text, enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
				}
				m.done()
			},
		})
	}
	// Added-token options: lstrip, rstrip, single_word, and a token matched in the normalised text.
	addedOpts := deriveWith(t, bge, "added-options", func(doc map[string]any) {
		tokens, _ := doc["added_tokens"].([]any)
		for _, tok := range tokens {
			m := tok.(map[string]any)
			switch m["content"] {
			case "[MASK]":
				m["lstrip"] = true
			case "[SEP]":
				m["rstrip"] = true
			case "[CLS]":
				m["single_word"] = true
			}
		}
		doc["added_tokens"] = append(tokens, map[string]any{"id": 30522, "content": "Tool-Call", "single_word": false,
			"lstrip": false, "rstrip": false, "normalized": true, "special": false})
	})
	checks = append(checks, check{
		name: "added-token-options/single/max0",
		job:  refJob{Tokenizer: addedOpts, Mode: "encode", Input: "corpus"},
		run: func(t *testing.T, res refResult) {
			tk := loadOrFail(t, addedOpts)
			if tk.VocabSize() != res.VocabSize {
				t.Errorf("VocabSize %d, reference %d", tk.VocabSize(), res.VocabSize)
			}
			m := mismatches{t: t}
			for i, text := range corpus {
				enc := tk.Encode(text)
				m.check(text, enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
			}
			m.done()
		},
	})
	checks = append(checks, check{
		name: "left-truncation-and-padding/file-config",
		job:  refJob{Tokenizer: left, Mode: "file", Input: "file"},
		run: func(t *testing.T, res refResult) {
			tk := loadOrFail(t, left)
			m := mismatches{t: t}
			for i, text := range corpus[:1500] {
				enc := tk.Encode(text)
				m.check(text, enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
			}
			m.done()
		},
	})
	sweepVariants := []struct {
		name               string
		lowercase, accents bool
	}{{"uncased", true, true}, {"cased", false, false}, {"lowercase-keep-accents", true, false}, {"strip-accents-keep-case", false, true}}
	for _, sv := range sweepVariants {
		path := deriveVariant(t, bge, "sweep-"+sv.name, sv.lowercase, sv.accents)
		checks = append(checks, check{
			name: "codepoints/" + sv.name,
			job:  refJob{Tokenizer: path, Mode: "encode", Input: "sweep"},
			run: func(t *testing.T, res refResult) {
				tk := loadOrFail(t, path)
				if err := tk.SetTruncation(0); err != nil {
					t.Fatal(err)
				}
				if err := tk.SetPadding(0); err != nil {
					t.Fatal(err)
				}
				m := mismatches{t: t}
				for i, text := range sweep {
					enc := tk.Encode(text)
					m.check(text, enc.IDs, enc.TypeIDs, enc.AttentionMask, res.Encodings[i])
				}
				m.done()
			},
		})
	}

	// all-minilm-l6-v2 shares bge's vocabulary and normaliser; what it adds is its own
	// truncation and padding config, so a subset of its checks keeps the reference run short.
	checks = slices.DeleteFunc(checks, func(c check) bool {
		switch c.name {
		case "all-minilm-l6-v2/single/max16", "all-minilm-l6-v2/pair/max0", "all-minilm-l6-v2/pair/max128",
			"all-minilm-l6-v2/batch/max0", "all-minilm-l6-v2/pair-batch/max48":
			return true
		}
		return false
	})
	jobs := make([]refJob, len(checks))
	for i, c := range checks {
		jobs[i] = c.job
	}
	began := time.Now()
	inputs := refInputs{"corpus": corpus, "pairs": pairs, "file": corpus[:1500], "sweep": sweep}
	results := runReference(t, inputs, jobs)
	t.Logf("reference tokenizers: %d jobs in %v", len(jobs), time.Since(began))
	for i, c := range checks {
		t.Run(c.name, func(t *testing.T) { c.run(t, results[i]) })
	}
}
