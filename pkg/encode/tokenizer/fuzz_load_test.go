package tokenizer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/fuzzcount"
	"github.com/rated-dev/rated/internal/testassets"
)

// FuzzLoad feeds tokenizer.json files (seeds: the installed bge-small and MiniLM tokenizers
// trimmed to a few hundred tokens, testdata/fuzz/FuzzLoad; the whole installed files are added
// when present). Any input is an error naming the file, or a tokenizer whose encodings of a few
// texts are well formed: ids inside the vocabulary, aligned type ids and mask, truncation kept.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(tinyJSON(uncasedNormalizer, tinyPost, "null", "null")))
	for _, m := range []string{"bge-small-en-v1.5", "all-minilm-l6-v2"} {
		if data, err := os.ReadFile(filepath.Join(testassets.Dir(f), "models", m, "tokenizer.json")); err == nil { // the home, RATED_HOME included
			f.Add(data)
		}
	}
	texts := []string{"", "Send an email to my team", "東京 Café \xff", strings.Repeat("unaffable ", 40)}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcount.Tick("FuzzLoad")
		tk, err := parse("fuzz/tokenizer.json", data)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/tokenizer.json") {
				t.Fatalf("error names no file: %v", err)
			}
			return
		}
		for _, s := range texts {
			for _, enc := range []Encoding{tk.Encode(s), tk.EncodePair(s, s)} {
				n := len(enc.IDs)
				if len(enc.TypeIDs) != n || len(enc.AttentionMask) != n {
					t.Fatalf("lengths %d %d %d", n, len(enc.TypeIDs), len(enc.AttentionMask))
				}
				real := 0
				for _, m := range enc.AttentionMask {
					real += int(m)
				}
				if limit := tk.Truncation(); limit > 0 && real > limit {
					t.Fatalf("%d real tokens beyond truncation %d", real, limit)
				}
				for _, id := range enc.IDs {
					if id < 0 || id >= tk.VocabSize() {
						t.Fatalf("id %d outside the vocabulary of %d", id, tk.VocabSize())
					}
				}
			}
		}
	})
}

// TestIDsOutsideTheVocabularyAreRefused (found by FuzzLoad, crasher 80f57eb050657b4a): a
// vocabulary id, added token, special token or pad id beyond the vocabulary used to load and
// give ids the model's embedding table does not have.
func TestIDsOutsideTheVocabularyAreRefused(t *testing.T) {
	base := `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"[CLS]":1,"[SEP]":2,"a":%s}},` +
		`"added_tokens":[%s],"post_processor":{"type":"BertProcessing","sep":["[SEP]",%s],"cls":["[CLS]",1]},"padding":%s}`
	for want, parts := range map[string][4]string{
		`vocab token "a" has id 7`:                   {"7", "", "2", "null"},
		`added token "[X]" has id 9`:                 {"3", `{"id":9,"content":"[X]"}`, "2", "null"},
		`post_processor special token has id -1`:     {"3", "", "-1", "null"},
		`padding pad_id has id 4, outside the vocab`: {"3", "", "2", `{"strategy":"BatchLongest","pad_id":4}`},
	} {
		_, err := parse("t.json", []byte(fmt.Sprintf(base, parts[0], parts[1], parts[2], parts[3])))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "t.json") {
			t.Errorf("error %v, want %q", err, want)
		}
	}
	if _, err := parse("t.json", []byte(fmt.Sprintf(base, "3", `{"id":4,"content":"[X]"}`, "2", `{"strategy":"BatchLongest","pad_id":4}`))); err != nil {
		t.Errorf("ids inside the vocabulary: %v", err)
	}
}
