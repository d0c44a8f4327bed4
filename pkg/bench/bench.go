// Package bench reads and writes benchmarks in the BEIR layout (corpus.jsonl, queries.jsonl,
// qrels/<split>.tsv), optionally with the tool catalog (catalog.jsonl) the corpus came from, so
// EcoAgent-Syn, EcoAgent-Real, the embedded default and any public BEIR collection share one
// reader.
package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/internal/textfile"
	"github.com/rated-dev/rated/pkg/catalog"
)

// Doc is one corpus entry (for rated, one tool: _id = tool id, title = name, text = description).
type Doc struct {
	ID       string         `json:"_id"`
	Title    string         `json:"title"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Query is one query.
type Query struct {
	ID       string         `json:"_id"`
	Text     string         `json:"text"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Qrels maps query id -> doc id -> graded relevance (> 0 is relevant).
type Qrels map[string]map[string]int

// Bench is a loaded benchmark. Splits maps a split name (train, dev, test) to its qrels.
type Bench struct {
	Corpus  []Doc
	Queries []Query
	Splits  map[string]Qrels
	// Tools is the catalog the corpus came from, when catalog.jsonl is present; nil otherwise.
	Tools []catalog.Tool
	// Warnings lists non-fatal findings, such as queries that appear in no qrels split.
	Warnings []string
}

// ReadDir loads a benchmark from a directory.
func ReadDir(dir string) (*Bench, error) {
	b, err := Read(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("benchmark %s: %w", dir, err)
	}
	return b, nil
}

// Read loads a benchmark from a file system (a directory or an embedded FS). Malformed lines,
// duplicate ids and qrels rows naming an unknown query or document are errors naming file and
// line: silently dropping them would skew every metric computed on the rest.
func Read(fsys fs.FS) (*Bench, error) {
	b := &Bench{Splits: map[string]Qrels{}}
	docIDs := map[string]bool{}
	err := readJSONL(fsys, "corpus.jsonl", func(line int, raw []byte) error {
		var d Doc
		if err := decodeRecord(raw, &d, docFields, "a BEIR corpus record", " (a tool's name goes in \"title\", its description in \"text\")"); err != nil {
			return err
		}
		if d.ID == "" {
			return errors.New(`corpus entry has no "_id"`)
		}
		if err := textfile.CheckID(`"_id"`, d.ID); err != nil {
			return err
		}
		if strings.TrimSpace(d.Title) == "" && strings.TrimSpace(d.Text) == "" {
			return fmt.Errorf("document %q has an empty \"title\" and \"text\": nothing to retrieve it by", d.ID)
		}
		if docIDs[d.ID] {
			return fmt.Errorf("duplicate document id %q", d.ID)
		}
		docIDs[d.ID] = true
		b.Corpus = append(b.Corpus, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	queryIDs := map[string]bool{}
	err = readJSONL(fsys, "queries.jsonl", func(line int, raw []byte) error {
		var q Query
		if err := decodeRecord(raw, &q, queryFields, "a BEIR query", ""); err != nil {
			return err
		}
		if q.ID == "" {
			return errors.New(`query has no "_id"`)
		}
		if err := textfile.CheckID(`"_id"`, q.ID); err != nil {
			return err
		}
		if strings.TrimSpace(q.Text) == "" {
			return fmt.Errorf("query %q has an empty \"text\"", q.ID)
		}
		if queryIDs[q.ID] {
			return fmt.Errorf("duplicate query id %q", q.ID)
		}
		queryIDs[q.ID] = true
		b.Queries = append(b.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(fsys, "qrels")
	if err != nil {
		return nil, fmt.Errorf("qrels: %w", err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".gz")
		if e.IsDir() || !strings.HasSuffix(name, ".tsv") {
			continue
		}
		split := strings.TrimSuffix(name, ".tsv")
		if _, done := b.Splits[split]; done {
			continue // name.tsv.gz beside name.tsv: read once (openFS refuses the pair)
		}
		q, err := readQrels(fsys, path.Join("qrels", name), queryIDs, docIDs)
		if err != nil {
			return nil, err
		}
		b.Splits[split] = q
	}
	if len(b.Splits) == 0 {
		return nil, errors.New("qrels/: no <split>.tsv file")
	}
	inSome := map[string]bool{}
	for _, q := range b.Splits {
		for id := range q {
			inSome[id] = true
		}
	}
	missing := 0
	for id := range queryIDs {
		if !inSome[id] {
			missing++
		}
	}
	if missing > 0 {
		b.Warnings = append(b.Warnings, fmt.Sprintf("%d queries in queries.jsonl have no qrels in any split; they are not evaluated", missing))
	}
	if f, err := openFS(fsys, "catalog.jsonl"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	} else if err == nil {
		defer f.Close()
		tools, err := catalog.DecodeJSONL(f, "catalog.jsonl")
		if err != nil {
			return nil, err
		}
		if err := checkCatalogCoversCorpus(tools, b.Corpus); err != nil {
			return nil, err
		}
		b.Tools = tools
	}
	return b, nil
}

// checkCatalogCoversCorpus refuses a catalog.jsonl that lacks a record for some corpus
// document. The static prior of such a document would silently come from the corpus fields
// alone under platform "other" (CorpusTools) while the rest use the catalog: with no id in
// common, every tool falls back and the catalog is ignored; with some missing, the priors mix
// two sources. Both mean the catalog belongs to another corpus. Catalog records without a
// document are allowed (a corpus may be a subset of its catalog).
func checkCatalogCoversCorpus(tools []catalog.Tool, corpus []Doc) error {
	inCatalog := make(map[string]bool, len(tools))
	for _, t := range tools {
		inCatalog[t.ID] = true
	}
	var missing []string
	for _, d := range corpus {
		if !inCatalog[d.ID] {
			missing = append(missing, d.ID)
		}
	}
	const show = 5
	quoted := func(ids []string) string {
		var q []string
		for _, id := range ids[:min(show, len(ids))] {
			q = append(q, strconv.Quote(id))
		}
		if len(ids) > show {
			q = append(q, "…")
		}
		return strings.Join(q, ", ")
	}
	const fix = "rebuild catalog.jsonl for this corpus, or remove it to compute every prior from the corpus fields alone (platform \"other\")"
	switch {
	case len(missing) == 0:
		return nil
	case len(missing) == len(corpus):
		ids := make([]string, len(tools))
		for i, t := range tools {
			ids[i] = t.ID
		}
		return fmt.Errorf("catalog.jsonl: none of its %d tool ids is a corpus.jsonl \"_id\" (catalog: %s; corpus: %s): it describes another corpus and would be ignored; %s",
			len(tools), quoted(ids), quoted(missing), fix)
	default:
		return fmt.Errorf("catalog.jsonl: %d of the %d corpus.jsonl documents have no catalog record (%s): their static prior would come from the corpus fields under platform \"other\" while the rest come from the catalog; %s",
			len(missing), len(corpus), quoted(missing), fix)
	}
}

// docFields and queryFields are the top-level fields of BEIR's corpus and query records. Any
// other field is refused: a misnamed text field ("query", "description") used to load as an
// empty text and give all-zero tables.
var (
	docFields   = []string{"_id", "title", "text", "metadata"}
	queryFields = []string{"_id", "text", "metadata"}
)

// decodeRecord unmarshals one JSON object into v after checking that its top-level fields are
// among allowed, spelt exactly (encoding/json would match "Text" to "text").
func decodeRecord(raw []byte, v any, allowed []string, what, hint string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return err
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(allowed, k) {
			unknown = append(unknown, strconv.Quote(k))
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		names := make([]string, len(allowed))
		for i, a := range allowed {
			names[i] = strconv.Quote(a)
		}
		return fmt.Errorf("unknown field %s: %s has only the fields %s%s", strings.Join(unknown, ", "), what, strings.Join(names, ", "), hint)
	}
	return json.Unmarshal(raw, v)
}

func readJSONL(fsys fs.FS, name string, each func(line int, raw []byte) error) error {
	f, err := openFS(fsys, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	return textfile.Lines(f, OpenedName(f, name), each)
}

// qrelsHeader is BEIR's header row; it may only be the first non-blank line.
const qrelsHeader = "query-id"

func readQrels(fsys fs.FS, name string, queryIDs, docIDs map[string]bool) (Qrels, error) {
	f, err := openFS(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	q := Qrels{}
	type judged struct{ line, grade int }
	seen := map[[2]string]judged{}
	first := true
	err = textfile.TabLines(f, OpenedName(f, name), func(line int, raw []byte) error {
		cols := strings.Split(string(raw), "\t")
		isHeader := len(cols) >= 2 && cols[0] == qrelsHeader
		if first {
			first = false
			if isHeader {
				return nil
			}
		}
		if isHeader {
			return errors.New("header row (query-id, corpus-id, score) after the first line")
		}
		if len(cols) != 3 {
			return fmt.Errorf("want 3 tab-separated columns (query-id, corpus-id, score), got %d", len(cols))
		}
		score, err := strconv.Atoi(cols[2])
		if err != nil {
			return fmt.Errorf("score %q is not an integer", cols[2])
		}
		if !queryIDs[cols[0]] {
			return fmt.Errorf("query %q is not in queries.jsonl", cols[0])
		}
		if !docIDs[cols[1]] {
			return fmt.Errorf("document %q is not in corpus.jsonl", cols[1])
		}
		key := [2]string{cols[0], cols[1]}
		if prev, dup := seen[key]; dup {
			if prev.grade != score {
				return fmt.Errorf("query %q, document %q judged grade %d here and grade %d on line %d", cols[0], cols[1], score, prev.grade, prev.line)
			}
			return nil // the same judgment twice
		}
		seen[key] = judged{line, score}
		if q[cols[0]] == nil {
			q[cols[0]] = map[string]int{}
		}
		q[cols[0]][cols[1]] = score
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Write stores the benchmark in dir, each file atomically.
func (b *Bench) Write(dir string) error {
	if err := writeJSONL(filepath.Join(dir, "corpus.jsonl"), len(b.Corpus), func(i int) any { return b.Corpus[i] }); err != nil {
		return err
	}
	if err := writeJSONL(filepath.Join(dir, "queries.jsonl"), len(b.Queries), func(i int) any { return b.Queries[i] }); err != nil {
		return err
	}
	for split, q := range b.Splits {
		if err := atomicfile.Write(filepath.Join(dir, "qrels", split+".tsv"), func(w io.Writer) error {
			fmt.Fprintln(w, "query-id\tcorpus-id\tscore")
			for _, qid := range slices.Sorted(maps.Keys(q)) {
				for _, did := range slices.Sorted(maps.Keys(q[qid])) {
					fmt.Fprintf(w, "%s\t%s\t%d\n", qid, did, q[qid][did])
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if b.Tools != nil {
		return catalog.WriteJSONL(filepath.Join(dir, "catalog.jsonl"), b.Tools)
	}
	return nil
}

func writeJSONL(p string, n int, item func(int) any) error {
	return atomicfile.Write(p, func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for i := 0; i < n; i++ {
			if err := enc.Encode(item(i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// SplitQueries returns the queries that have qrels in split, in queries.jsonl order.
func (b *Bench) SplitQueries(split string) []Query {
	q := b.Splits[split]
	var out []Query
	for _, query := range b.Queries {
		if len(q[query.ID]) > 0 {
			out = append(out, query)
		}
	}
	return out
}

// RelevantQueries returns the queries with at least one relevant document (grade > 0) in
// split, in queries.jsonl order: the queries a retrieval or selection measure can score.
func (b *Bench) RelevantQueries(split string) []Query {
	var out []Query
	for _, query := range b.Queries {
		for _, g := range b.Splits[split][query.ID] {
			if g > 0 {
				out = append(out, query)
				break
			}
		}
	}
	return out
}

// Relevant returns the ids of the documents with relevance > 0 for a query in split, sorted.
func (b *Bench) Relevant(split, queryID string) []string {
	var out []string
	for id, rel := range b.Splits[split][queryID] {
		if rel > 0 {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// DocsFromTools builds corpus entries from catalog tools (title = name, text = description).
func DocsFromTools(tools []catalog.Tool) []Doc {
	docs := make([]Doc, len(tools))
	for i, t := range tools {
		docs[i] = Doc{ID: t.ID, Title: t.Name, Text: t.Description, Metadata: map[string]any{"platform": t.Platform}}
	}
	return docs
}

// CorpusTools returns one catalog record per corpus document, in corpus order: the benchmark's
// catalog.jsonl record when it has one for the document (Read refuses a catalog lacking any),
// else a record built from the corpus fields alone (name = title, description = text, platform
// "other"). Priors are cleared so the caller recomputes them under its own weights.
func (b *Bench) CorpusTools() []catalog.Tool {
	byID := make(map[string]catalog.Tool, len(b.Tools))
	for _, t := range b.Tools {
		byID[t.ID] = t
	}
	tools := make([]catalog.Tool, len(b.Corpus))
	for i, d := range b.Corpus {
		t, ok := byID[d.ID]
		if !ok {
			t = catalog.Tool{ID: d.ID, Name: d.Title, Description: d.Text, Platform: "other"}
		}
		t.Prior = nil
		tools[i] = t
	}
	return tools
}
