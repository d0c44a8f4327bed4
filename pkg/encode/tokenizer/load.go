package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// tokenizerFile is the part of a Hugging Face tokenizer.json that BERT-style tokenizers use.
type tokenizerFile struct {
	Truncation    *truncationJSON `json:"truncation"`
	Padding       *paddingJSON    `json:"padding"`
	AddedTokens   []addedJSON     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	Model         json.RawMessage `json:"model"`
	PostProcessor json.RawMessage `json:"post_processor"`
}

type truncationJSON struct {
	Direction string `json:"direction"`
	MaxLength int    `json:"max_length"`
	Strategy  string `json:"strategy"`
	Stride    int    `json:"stride"`
}

type paddingJSON struct {
	Strategy        json.RawMessage `json:"strategy"`
	Direction       string          `json:"direction"`
	PadToMultipleOf *int            `json:"pad_to_multiple_of"`
	PadID           int32           `json:"pad_id"`
	PadTypeID       int32           `json:"pad_type_id"`
}

type addedJSON struct {
	ID         int32  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	Lstrip     bool   `json:"lstrip"`
	Rstrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
}

type typed struct {
	Type string `json:"type"`
}

type bertNormalizerJSON struct {
	CleanText          *bool `json:"clean_text"`
	HandleChineseChars *bool `json:"handle_chinese_chars"`
	StripAccents       *bool `json:"strip_accents"`
	Lowercase          *bool `json:"lowercase"`
}

type wordPieceJSON struct {
	Type                    string           `json:"type"`
	UnkToken                string           `json:"unk_token"`
	ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
	MaxInputCharsPerWord    *int             `json:"max_input_chars_per_word"`
	Vocab                   map[string]int32 `json:"vocab"`
}

type templateJSON struct {
	Type          string                         `json:"type"`
	Single        []map[string]templateEntryJSON `json:"single"`
	Pair          []map[string]templateEntryJSON `json:"pair"`
	SpecialTokens map[string]struct {
		IDs []int32 `json:"ids"`
	} `json:"special_tokens"`
	// BertProcessing
	Sep []json.RawMessage `json:"sep"`
	Cls []json.RawMessage `json:"cls"`
}

type templateEntryJSON struct {
	ID     string `json:"id"`
	TypeID int32  `json:"type_id"`
}

// errorf formats an error naming the tokenizer file.
func errorf(path, format string, args ...any) error {
	return fmt.Errorf("tokenizer: %s: "+format, append([]any{path}, args...)...)
}

// Load reads a Hugging Face tokenizer.json of a BERT-style WordPiece tokenizer. The truncation
// and padding it configures apply to Encode and EncodePair until SetTruncation or SetPadding
// override them. A missing or corrupt file, or a component other than the ones the package
// implements (WordPiece model, BertNormalizer, BertPreTokenizer, TemplateProcessing or
// BertProcessing post-processor), is an error naming the file and the component.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: reading %w", err)
	}
	return parse(path, data)
}

func parse(path string, data []byte) (*Tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, jsonError(path, data, err)
	}
	t := &Tokenizer{path: path}
	if err := t.loadModel(f.Model); err != nil {
		return nil, err
	}
	if err := t.loadNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if err := t.loadPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.loadAddedTokens(f.AddedTokens); err != nil {
		return nil, err
	}
	if err := t.loadPostProcessor(f.PostProcessor); err != nil {
		return nil, err
	}
	if err := t.loadTruncation(f.Truncation); err != nil {
		return nil, err
	}
	if err := t.loadPadding(f.Padding); err != nil {
		return nil, err
	}
	if err := t.checkIDs(); err != nil {
		return nil, err
	}
	return t, nil
}

// checkIDs refuses token ids outside the vocabulary (0 to VocabSize-1): the model's embedding
// table has one row per id, so a larger id fails deep in ONNX Runtime, and another file's ids
// would read the wrong rows.
func (t *Tokenizer) checkIDs() error {
	n := int32(t.vocabSize)
	check := func(what string, id int32) error {
		if id < 0 || id >= n {
			return errorf(t.path, "%s has id %d, outside the vocabulary of %d tokens (ids 0 to %d)", what, id, n, n-1)
		}
		return nil
	}
	for _, tok := range slices.Sorted(maps.Keys(t.vocab)) {
		if err := check(fmt.Sprintf("vocab token %q", tok), t.vocab[tok]); err != nil {
			return err
		}
	}
	for _, m := range []addedMatcher{t.rawAdded, t.normAdded} {
		for _, a := range m.tokens {
			if err := check(fmt.Sprintf("added token %q", a.content), a.id); err != nil {
				return err
			}
		}
	}
	for _, pieces := range [][]templatePiece{t.post.single, t.post.pair} {
		for _, p := range pieces {
			for _, id := range p.special {
				if err := check("post_processor special token", id); err != nil {
					return err
				}
			}
		}
	}
	return check("padding pad_id", t.padding.id)
}

// jsonError names the file and line of a JSON error.
func jsonError(path string, data []byte, err error) error {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typeErr):
		offset = typeErr.Offset
	}
	if offset >= 0 {
		line := 1 + bytes.Count(data[:min(int(offset), len(data))], []byte("\n"))
		return fmt.Errorf("tokenizer: %s:%d: not a valid tokenizer.json: %w", path, line, err)
	}
	return fmt.Errorf("tokenizer: %s: not a valid tokenizer.json: %w", path, err)
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || bytes.Equal(s, []byte("null"))
}

func (t *Tokenizer) loadModel(raw json.RawMessage) error {
	if isNull(raw) {
		return errorf(t.path, "no model")
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return errorf(t.path, "model: %v", err)
	}
	if ty.Type != "WordPiece" {
		return errorf(t.path, "unsupported model type %q (only WordPiece, as in BERT tokenizers, is supported)", ty.Type)
	}
	var m wordPieceJSON
	if err := json.Unmarshal(raw, &m); err != nil {
		return errorf(t.path, "WordPiece model: %v", err)
	}
	if len(m.Vocab) == 0 {
		return errorf(t.path, "WordPiece model has an empty vocabulary")
	}
	prefix := "##"
	if m.ContinuingSubwordPrefix != nil {
		prefix = *m.ContinuingSubwordPrefix
	}
	t.maxWordChars = 100
	if m.MaxInputCharsPerWord != nil {
		t.maxWordChars = *m.MaxInputCharsPerWord
	}
	unk, ok := m.Vocab[m.UnkToken]
	if !ok {
		return errorf(t.path, "WordPiece unk_token %q is not in the vocabulary", m.UnkToken)
	}
	t.unkID = unk
	t.vocab = m.Vocab
	t.continuations = make(map[string]int32, len(m.Vocab)/4)
	for tok, id := range m.Vocab {
		t.maxWordBytes = max(t.maxWordBytes, len(tok))
		if strings.HasPrefix(tok, prefix) {
			rest := tok[len(prefix):]
			t.continuations[rest] = id
			t.maxContBytes = max(t.maxContBytes, len(rest))
		}
	}
	t.vocabSize = len(m.Vocab)
	return nil
}

func (t *Tokenizer) loadNormalizer(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return errorf(t.path, "normalizer: %v", err)
	}
	if ty.Type != "BertNormalizer" {
		return errorf(t.path, "unsupported normalizer type %q (only BertNormalizer is supported)", ty.Type)
	}
	var n bertNormalizerJSON
	if err := json.Unmarshal(raw, &n); err != nil {
		return errorf(t.path, "BertNormalizer: %v", err)
	}
	flag := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	bn := &bertNormalizer{
		cleanText:    flag(n.CleanText, true),
		chineseChars: flag(n.HandleChineseChars, true),
		lowercase:    flag(n.Lowercase, true),
	}
	// strip_accents null (or absent) follows lowercase.
	bn.stripAccents = flag(n.StripAccents, bn.lowercase)
	t.normalizer = bn
	return nil
}

func (t *Tokenizer) loadPreTokenizer(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var ty typed
	if err := json.Unmarshal(raw, &ty); err != nil {
		return errorf(t.path, "pre_tokenizer: %v", err)
	}
	if ty.Type != "BertPreTokenizer" {
		return errorf(t.path, "unsupported pre_tokenizer type %q (only BertPreTokenizer is supported)", ty.Type)
	}
	t.preTokenize = true
	return nil
}

func (t *Tokenizer) loadAddedTokens(list []addedJSON) error {
	var raw, norm []addedToken
	seen := map[string]bool{}
	for _, a := range list {
		if _, inVocab := t.vocab[a.Content]; !inVocab && !seen[a.Content] {
			t.vocabSize++
		}
		seen[a.Content] = true
		tok := addedToken{content: a.Content, id: a.ID, singleWord: a.SingleWord, lstrip: a.Lstrip, rstrip: a.Rstrip}
		if !a.Normalized {
			raw = append(raw, tok)
			continue
		}
		// A normalized added token is matched in the normalised text, by its normalised form.
		if t.normalizer != nil {
			var st normalizeState
			tok.content = string(t.normalizer.appendNormalized(nil, a.Content, &st))
		}
		norm = append(norm, tok)
	}
	t.rawAdded = newAddedMatcher(raw)
	t.normAdded = newAddedMatcher(norm)
	return nil
}

func (t *Tokenizer) loadPostProcessor(raw json.RawMessage) error {
	if isNull(raw) {
		t.post = postProcessor{
			single: []templatePiece{{sequence: 0}},
			pair:   []templatePiece{{sequence: 0}, {sequence: 1, typeID: 1}},
		}
		return nil
	}
	var p templateJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return errorf(t.path, "post_processor: %v", err)
	}
	switch p.Type {
	case "TemplateProcessing":
		single, err := t.template("single", p.Single, p)
		if err != nil {
			return err
		}
		pair, err := t.template("pair", p.Pair, p)
		if err != nil {
			return err
		}
		t.post = postProcessor{single: single, pair: pair}
	case "BertProcessing":
		sep, err := t.bertSpecial("sep", p.Sep)
		if err != nil {
			return err
		}
		cls, err := t.bertSpecial("cls", p.Cls)
		if err != nil {
			return err
		}
		t.post = postProcessor{
			single: []templatePiece{{special: cls}, {sequence: 0}, {special: sep}},
			pair: []templatePiece{{special: cls}, {sequence: 0}, {special: sep},
				{sequence: 1, typeID: 1}, {special: sep, typeID: 1}},
		}
	default:
		return errorf(t.path, "unsupported post_processor type %q (only TemplateProcessing and BertProcessing are supported)", p.Type)
	}
	t.post.nSingle = countSpecial(t.post.single)
	t.post.nPair = countSpecial(t.post.pair)
	return nil
}

func (t *Tokenizer) template(name string, entries []map[string]templateEntryJSON, p templateJSON) ([]templatePiece, error) {
	var out []templatePiece
	for i, e := range entries {
		if len(e) != 1 {
			return nil, errorf(t.path, "post_processor %s[%d]: want one SpecialToken or Sequence", name, i)
		}
		for kind, v := range e {
			switch kind {
			case "SpecialToken":
				sp, ok := p.SpecialTokens[v.ID]
				if !ok || len(sp.IDs) == 0 {
					return nil, errorf(t.path, "post_processor %s[%d]: special token %q missing from special_tokens", name, i, v.ID)
				}
				out = append(out, templatePiece{special: sp.IDs, typeID: v.TypeID})
			case "Sequence":
				seq := 0
				switch v.ID {
				case "A":
				case "B":
					seq = 1
				default:
					return nil, errorf(t.path, "post_processor %s[%d]: unknown sequence %q", name, i, v.ID)
				}
				out = append(out, templatePiece{sequence: seq, typeID: v.TypeID})
			default:
				return nil, errorf(t.path, "post_processor %s[%d]: unsupported template piece %q", name, i, kind)
			}
		}
	}
	return out, nil
}

func (t *Tokenizer) bertSpecial(name string, v []json.RawMessage) ([]int32, error) {
	var id int32
	if len(v) != 2 || json.Unmarshal(v[1], &id) != nil {
		return nil, errorf(t.path, "BertProcessing %s: want [token, id]", name)
	}
	return []int32{id}, nil
}

func (t *Tokenizer) loadTruncation(tr *truncationJSON) error {
	if tr == nil {
		return nil
	}
	if tr.Strategy != "" && tr.Strategy != "LongestFirst" {
		return errorf(t.path, "unsupported truncation strategy %q (only LongestFirst is supported)", tr.Strategy)
	}
	if tr.Stride != 0 {
		return errorf(t.path, "unsupported truncation stride %d (only 0 is supported)", tr.Stride)
	}
	if tr.MaxLength < 0 {
		return errorf(t.path, "truncation max_length %d is negative", tr.MaxLength)
	}
	if tr.MaxLength == 0 {
		// The reference would truncate every input to its special tokens alone.
		return errorf(t.path, "truncation max_length 0 would remove every token")
	}
	t.truncation = truncation{maxLen: tr.MaxLength, left: tr.Direction == "Left"}
	return nil
}

func (t *Tokenizer) loadPadding(p *paddingJSON) error {
	if id, ok := t.vocab["[PAD]"]; ok {
		t.padding.id = id
	}
	if p == nil {
		return nil
	}
	t.padding = padding{enabled: true, id: p.PadID, typeID: p.PadTypeID, left: p.Direction == "Left"}
	if p.PadToMultipleOf != nil {
		t.padding.multipleOf = *p.PadToMultipleOf
	}
	var strategy string
	var fixed struct {
		Fixed *int `json:"Fixed"`
	}
	switch {
	case json.Unmarshal(p.Strategy, &strategy) == nil && strategy == "BatchLongest":
	case json.Unmarshal(p.Strategy, &fixed) == nil && fixed.Fixed != nil && *fixed.Fixed >= 0:
		t.padding.fixed = *fixed.Fixed
	default:
		return errorf(t.path, "unsupported padding strategy %s", string(p.Strategy))
	}
	return nil
}
