package tokenizer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
)

// tinyVocab is a hand-made BERT-style vocabulary; the expected ids below are worked out by hand
// from it.
const tinyVocab = `{"[PAD]":0,"[UNK]":1,"[CLS]":2,"[SEP]":3,"[MASK]":4,"un":5,"##aff":6,"##able":7,
"hello":8,",":9,"world":10,"!":11,"cafe":12,"東":13,"京":14,"##s":15,"a":16,"##a":17,"Hello":18,
"café":19,"i":20,"\u0307":21,"##\u0307":22}`

const tinyPost = `{"type":"TemplateProcessing",
 "single":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}}],
 "pair":[{"SpecialToken":{"id":"[CLS]","type_id":0}},{"Sequence":{"id":"A","type_id":0}},{"SpecialToken":{"id":"[SEP]","type_id":0}},
         {"Sequence":{"id":"B","type_id":1}},{"SpecialToken":{"id":"[SEP]","type_id":1}}],
 "special_tokens":{"[CLS]":{"id":"[CLS]","ids":[2],"tokens":["[CLS]"]},"[SEP]":{"id":"[SEP]","ids":[3],"tokens":["[SEP]"]}}}`

const tinyAdded = `[{"id":0,"content":"[PAD]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":1,"content":"[UNK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":2,"content":"[CLS]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":3,"content":"[SEP]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true},
 {"id":4,"content":"[MASK]","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}]`

// tinyJSON builds a tokenizer.json around the tiny vocabulary.
func tinyJSON(normalizer, postProcessor, truncation, padding string) string {
	return `{"version":"1.0","truncation":` + truncation + `,"padding":` + padding + `,
 "added_tokens":` + tinyAdded + `,
 "normalizer":` + normalizer + `,
 "pre_tokenizer":{"type":"BertPreTokenizer"},
 "post_processor":` + postProcessor + `,
 "decoder":{"type":"WordPiece","prefix":"##","cleanup":true},
 "model":{"type":"WordPiece","unk_token":"[UNK]","continuing_subword_prefix":"##","max_input_chars_per_word":9,"vocab":` + tinyVocab + `}}`
}

const uncasedNormalizer = `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true}`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func loadTiny(t *testing.T, normalizer, postProcessor, truncation, padding string) *Tokenizer {
	t.Helper()
	tk, err := Load(writeFile(t, "tokenizer.json", tinyJSON(normalizer, postProcessor, truncation, padding)))
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestEncodeHandComputed(t *testing.T) {
	cased := `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":false,"lowercase":false}`
	lowerKeepAccents := `{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":false,"lowercase":true}`
	tests := []struct {
		name, normalizer, text string
		want                   []int
	}{
		{"wordpiece pieces", uncasedNormalizer, "unaffable", []int{2, 5, 6, 7, 3}},
		{"lowercase and punctuation", uncasedNormalizer, "Hello, World!", []int{2, 8, 9, 10, 11, 3}},
		{"accent stripped (null follows lowercase)", uncasedNormalizer, "Café", []int{2, 12, 3}},
		{"combining accent stripped", uncasedNormalizer, "Cafe\u0301", []int{2, 12, 3}},
		{"CJK split into characters", uncasedNormalizer, "東京", []int{2, 13, 14, 3}},
		{"unknown word", uncasedNormalizer, "xyz hello", []int{2, 1, 8, 3}},
		{"partly covered word is one unknown", uncasedNormalizer, "unxx", []int{2, 1, 3}},
		{"special token in text", uncasedNormalizer, "hello[MASK]world", []int{2, 8, 4, 10, 3}},
		{"special tokens match case-sensitively", uncasedNormalizer, "[mask]", []int{2, 1, 1, 1, 3}},
		{"control chars removed, tab is a space", uncasedNormalizer, "hel\x00lo\tworld\u200b", []int{2, 8, 10, 3}},
		{"max_input_chars_per_word 9: nine chars", uncasedNormalizer, "aaaaaaaaa", []int{2, 16, 17, 17, 17, 17, 17, 17, 17, 17, 3}},
		{"max_input_chars_per_word 9: ten chars", uncasedNormalizer, "aaaaaaaaaa", []int{2, 1, 3}},
		{"chars counted after normalisation", uncasedNormalizer, strings.Repeat("a\u0301", 9), []int{2, 16, 17, 17, 17, 17, 17, 17, 17, 17, 3}},
		{"empty", uncasedNormalizer, "", []int{2, 3}},
		{"white space only", uncasedNormalizer, " \t\n\u00a0\u3000", []int{2, 3}},
		{"cased keeps case", cased, "Hello hello", []int{2, 18, 8, 3}},
		{"cased keeps accents", cased, "café", []int{2, 19, 3}},
		{"İ lowercases to i + combining dot (Rust to_lowercase)", lowerKeepAccents, "İ", []int{2, 20, 22, 3}},
		{"İ with accents stripped is i", uncasedNormalizer, "İ", []int{2, 20, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := loadTiny(t, tt.normalizer, tinyPost, "null", "null")
			enc := tk.Encode(tt.text)
			if !slices.Equal(enc.IDs, tt.want) {
				t.Errorf("Encode(%q) ids %v, want %v", tt.text, enc.IDs, tt.want)
			}
			for i := range enc.IDs {
				if enc.TypeIDs[i] != 0 || enc.AttentionMask[i] != 1 {
					t.Fatalf("type ids %v mask %v, want all 0 and all 1", enc.TypeIDs, enc.AttentionMask)
				}
			}
		})
	}
}

func TestTruncationPairsPadding(t *testing.T) {
	tk := loadTiny(t, uncasedNormalizer, tinyPost, "null", "null")
	pair := tk.EncodePair("hello world", "unaffable")
	if want := []int{2, 8, 10, 3, 5, 6, 7, 3}; !slices.Equal(pair.IDs, want) {
		t.Errorf("pair ids %v, want %v", pair.IDs, want)
	}
	if want := []int{0, 0, 0, 0, 1, 1, 1, 1}; !slices.Equal(pair.TypeIDs, want) {
		t.Errorf("pair type ids %v, want %v", pair.TypeIDs, want)
	}

	// Longest first, 2 + 3 model tokens into 6 - 3 special tokens = 3: the longer would get
	// max(2, 3-2) = 2, but 2 + 2 > 3, so the shorter gets 3/2 = 1 and the longer 1 + 3%2 = 2.
	if err := tk.SetTruncation(6); err != nil {
		t.Fatal(err)
	}
	pair = tk.EncodePair("hello world", "unaffable")
	if want := []int{2, 8, 3, 5, 6, 3}; !slices.Equal(pair.IDs, want) {
		t.Errorf("truncated pair ids %v, want %v", pair.IDs, want)
	}
	// 1 + 3 into 3: the shorter stays whole, the longer gets max(1, 3-1) = 2.
	pair = tk.EncodePair("hello", "unaffable")
	if want := []int{2, 8, 3, 5, 6, 3}; !slices.Equal(pair.IDs, want) {
		t.Errorf("truncated pair ids %v, want %v", pair.IDs, want)
	}
	single := tk.Encode("hello world hello world")
	if want := []int{2, 8, 10, 8, 10, 3}; !slices.Equal(single.IDs, want) {
		t.Errorf("truncated ids %v, want %v", single.IDs, want)
	}

	if err := tk.SetPadding(9); err != nil {
		t.Fatal(err)
	}
	single = tk.Encode("hello")
	if want := []int{2, 8, 3, 0, 0, 0, 0, 0, 0}; !slices.Equal(single.IDs, want) {
		t.Errorf("padded ids %v, want %v", single.IDs, want)
	}
	if want := []int{1, 1, 1, 0, 0, 0, 0, 0, 0}; !slices.Equal(single.AttentionMask, want) {
		t.Errorf("padded mask %v, want %v", single.AttentionMask, want)
	}

	batch := tk.EncodeBatch([]string{"hello", "hello world !", ""}, 0)
	if batch.BatchSize != 3 || batch.SeqLen != 5 {
		t.Fatalf("batch %d×%d, want 3×5", batch.BatchSize, batch.SeqLen)
	}
	wantIDs := []int64{2, 8, 3, 0, 0, 2, 8, 10, 11, 3, 2, 3, 0, 0, 0}
	wantMask := []int64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0}
	if !slices.Equal(batch.InputIDs, wantIDs) || !slices.Equal(batch.AttentionMask, wantMask) {
		t.Errorf("batch ids %v mask %v, want %v %v", batch.InputIDs, batch.AttentionMask, wantIDs, wantMask)
	}
	if !slices.Equal(batch.TokenTypeIDs, make([]int64, 15)) {
		t.Errorf("batch type ids %v, want zeros", batch.TokenTypeIDs)
	}
	// maxLen overrides the tokenizer's truncation for the batch.
	batch = tk.EncodeBatch([]string{"hello world !"}, 4)
	if want := []int64{2, 8, 10, 3}; !slices.Equal(batch.InputIDs, want) {
		t.Errorf("batch maxLen 4 ids %v, want %v", batch.InputIDs, want)
	}
	pb := tk.EncodePairBatch([]string{"hello", "a"}, []string{"world", "hello world"}, 0)
	wantPair := []int64{2, 8, 3, 10, 3, 0, 2, 16, 3, 8, 10, 3}
	wantTypes := []int64{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1}
	if pb.SeqLen != 6 || !slices.Equal(pb.InputIDs, wantPair) || !slices.Equal(pb.TokenTypeIDs, wantTypes) {
		t.Errorf("pair batch ids %v types %v (len %d), want %v %v", pb.InputIDs, pb.TokenTypeIDs, pb.SeqLen, wantPair, wantTypes)
	}
}

func TestFileConfigAndBertProcessing(t *testing.T) {
	bertPost := `{"type":"BertProcessing","sep":["[SEP]",3],"cls":["[CLS]",2]}`
	tk := loadTiny(t, uncasedNormalizer, bertPost,
		`{"direction":"Right","max_length":4,"strategy":"LongestFirst","stride":0}`,
		`{"strategy":{"Fixed":6},"direction":"Right","pad_to_multiple_of":null,"pad_id":0,"pad_type_id":0,"pad_token":"[PAD]"}`)
	enc := tk.Encode("hello world hello")
	if want := []int{2, 8, 10, 3, 0, 0}; !slices.Equal(enc.IDs, want) {
		t.Errorf("ids %v, want %v (truncation 4, padding 6 from the file)", enc.IDs, want)
	}
	pair := tk.EncodePair("a", "hello")
	if want := []int{2, 3, 8, 3, 0, 0}; !slices.Equal(pair.IDs, want) {
		// 1 + 1 model tokens into 4 - 3 = 1: both are cut, the first to 1/2 = 0, the second
		// to 0 + 1%2 = 1.
		t.Errorf("pair ids %v, want %v", pair.IDs, want)
	}
	if want := []int{0, 0, 1, 1, 0, 0}; !slices.Equal(pair.TypeIDs, want) {
		t.Errorf("pair type ids %v, want %v", pair.TypeIDs, want)
	}
	if tk.VocabSize() != 23 || tk.PadID() != 0 || tk.Truncation() != 4 {
		t.Errorf("VocabSize %d PadID %d Truncation %d, want 23 0 4", tk.VocabSize(), tk.PadID(), tk.Truncation())
	}
	if id, ok := tk.TokenID("##able"); !ok || id != 7 {
		t.Errorf("TokenID(##able) = %d %v", id, ok)
	}
	if err := tk.SetTruncation(1); err == nil {
		t.Error("SetTruncation(1) with two special tokens: want an error")
	}
}

func TestLoadErrors(t *testing.T) {
	good := tinyJSON(uncasedNormalizer, tinyPost, "null", "null")
	tests := []struct {
		name, content string
		want          []string
	}{
		{"corrupt JSON", "{\n\"model\": {\n  oops", []string{"tokenizer.json:3", "not a valid tokenizer.json"}},
		{"BPE model", `{"model":{"type":"BPE","vocab":{},"merges":[]}}`, []string{`unsupported model type "BPE"`}},
		{"Unigram model", `{"model":{"type":"Unigram","vocab":[]}}`, []string{`unsupported model type "Unigram"`}},
		{"no model", `{}`, []string{"no model"}},
		{"unknown normalizer", strings.Replace(good, `"type":"BertNormalizer"`, `"type":"NFKC"`, 1), []string{`unsupported normalizer type "NFKC"`}},
		{"sequence normalizer", strings.Replace(good, uncasedNormalizer, `{"type":"Sequence","normalizers":[]}`, 1), []string{`unsupported normalizer type "Sequence"`}},
		{"unknown pre-tokenizer", strings.Replace(good, `"type":"BertPreTokenizer"`, `"type":"ByteLevel"`, 1), []string{`unsupported pre_tokenizer type "ByteLevel"`}},
		{"unknown post-processor", strings.Replace(good, `"type":"TemplateProcessing"`, `"type":"RobertaProcessing"`, 1), []string{`unsupported post_processor type "RobertaProcessing"`}},
		{"unk not in vocabulary", strings.Replace(good, `"unk_token":"[UNK]"`, `"unk_token":"<unk>"`, 1), []string{`unk_token "<unk>"`}},
		{"truncation strategy", strings.Replace(good, `"truncation":null`, `"truncation":{"max_length":8,"strategy":"OnlySecond","stride":0}`, 1), []string{`truncation strategy "OnlySecond"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "tokenizer.json", tt.content)
			_, err := Load(path)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range append(tt.want, path) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	missing := filepath.Join(t.TempDir(), "nope", "tokenizer.json")
	if _, err := Load(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: error %v does not name %s", err, missing)
	}
}

func TestConcurrentEncode(t *testing.T) {
	tk := loadTiny(t, uncasedNormalizer, tinyPost, "null", "null")
	want := tk.Encode("Hello, World! unaffable Café 東京").IDs
	done := make(chan []int)
	for g := 0; g < 8; g++ {
		go func() {
			var got []int
			for i := 0; i < 200; i++ {
				got = tk.Encode("Hello, World! unaffable Café 東京").IDs
			}
			done <- got
		}()
	}
	for g := 0; g < 8; g++ {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent Encode %v, want %v", got, want)
		}
	}
}

// FuzzEncode checks invariants on arbitrary input, invalid UTF-8 included (which the reference
// cannot receive: Python strings are always valid): no panic, [CLS] … [SEP], ids in the
// vocabulary, aligned type ids and mask, truncation respected.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{"", "unaffable", "Hello, World!", "東京 Café", "\xff\xfe\x80abc", "a\u0301\u0327",
		"[MASK][SEP]", strings.Repeat("a", 40), "\x00\t\n\u200b\u00a0"} {
		f.Add(s, s)
	}
	var tokenizers []*Tokenizer
	for _, normalizer := range []string{uncasedNormalizer, "null"} {
		tk, err := parse("fuzz.json", []byte(tinyJSON(normalizer, tinyPost, "null", "null")))
		if err != nil {
			f.Fatal(err)
		}
		if err := tk.SetTruncation(12); err != nil {
			f.Fatal(err)
		}
		tokenizers = append(tokenizers, tk)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		fuzzcount.Tick("FuzzEncode")
		for _, tk := range tokenizers {
			for _, enc := range []Encoding{tk.Encode(a), tk.EncodePair(a, b)} {
				n := len(enc.IDs)
				if n < 2 || n > 12 || len(enc.TypeIDs) != n || len(enc.AttentionMask) != n {
					t.Fatalf("lengths %d %d %d", n, len(enc.TypeIDs), len(enc.AttentionMask))
				}
				if enc.IDs[0] != 2 || enc.IDs[n-1] != 3 {
					t.Fatalf("ids %v do not start with [CLS] and end with [SEP]", enc.IDs)
				}
				for _, id := range enc.IDs {
					if id < 0 || id >= tk.VocabSize() {
						t.Fatalf("id %d outside the vocabulary", id)
					}
				}
			}
		}
	})
}
