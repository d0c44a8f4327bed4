package retrieve

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/defaultbench"
)

// refInput is the input of testdata/lexical_ref.py.
type refInput struct {
	Model     string   `json:"model"`
	Docs      []refDoc `json:"docs"`
	Queries   []string `json:"queries"`
	K1        float64  `json:"k1,omitempty"`
	B         float64  `json:"b,omitempty"`
	Epsilon   float64  `json:"epsilon,omitempty"`
	Sublinear bool     `json:"sublinear"`
}

type refDoc struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// refOutput is the output of testdata/lexical_ref.py.
type refOutput struct {
	DocTokens   [][]string  `json:"doc_tokens"`
	QueryTokens [][]string  `json:"query_tokens"`
	Scores      [][]float64 `json:"scores"`
}

// runLexicalRef runs the Python reference (rank-bm25 / scikit-learn) on docs and queries.
func runLexicalRef(t *testing.T, in refInput) refOutput {
	t.Helper()
	python := testassets.Python(t)
	dir := t.TempDir()
	inPath, outPath := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, filepath.Join("testdata", "lexical_ref.py"), inPath, outPath)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lexical_ref.py: %v\n%s", err, msg)
	}
	raw, err = os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var out refOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("lexical_ref.py output: %v", err)
	}
	return out
}

// refCorpus is one real corpus with real queries for the reference comparisons.
type refCorpus struct {
	name    string
	docs    []bench.Doc
	queries []string
}

// refCorpora returns (1) the tools of the embedded default benchmark searched with its own
// queries and the 765 ToolBench queries, and (2) the ToolBench queries used as documents (a
// larger vocabulary, with terms in more than half of the documents, so the IDF floor is hit)
// searched with the default benchmark's queries and 100 ToolBench queries.
func refCorpora(t *testing.T) []refCorpus {
	t.Helper()
	def, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb := testassets.ToolBenchQueries(t)
	var defQueries []string
	for _, q := range def.Queries {
		defQueries = append(defQueries, q.Text)
	}
	var tbDocs []bench.Doc
	for i, q := range tb {
		tbDocs = append(tbDocs, bench.Doc{ID: fmt.Sprintf("tb%d", i), Text: q})
	}
	return []refCorpus{
		{"default-tools", def.Corpus, append(append([]string{}, defQueries...), tb...)},
		{"toolbench-as-docs", tbDocs, append(append([]string{}, defQueries...), tb[:100]...)},
	}
}

func refDocs(docs []bench.Doc) []refDoc {
	out := make([]refDoc, len(docs))
	for i, d := range docs {
		out[i] = refDoc{Title: d.Title, Text: d.Text}
	}
	return out
}

// scorer is what the reference comparison needs from a lexical retriever.
type scorer interface {
	Retriever
	Scores(query string) []float64
}

// checkAgainstRef compares tokens (Tokenize's), every score (to tol, relative above 1) and the
// top-10 of Search with the reference scores.
func checkAgainstRef(t *testing.T, c refCorpus, m scorer, ref refOutput, tol float64) {
	t.Helper()
	checkAnalyzedAgainstRef(t, c, m, appendTokens, ref, tol)
}

// checkAnalyzedAgainstRef is checkAgainstRef for a retriever whose terms come from analyze.
func checkAnalyzedAgainstRef(t *testing.T, c refCorpus, m scorer, analyze Analyzer, ref refOutput, tol float64) {
	t.Helper()
	if len(ref.Scores) != len(c.queries) {
		t.Fatalf("%s: reference returned %d score rows for %d queries", c.name, len(ref.Scores), len(c.queries))
	}
	for i, d := range c.docs {
		if got := analyze(nil, DocText(d)); !reflect.DeepEqual(got, ref.DocTokens[i]) && !(len(got) == 0 && len(ref.DocTokens[i]) == 0) {
			t.Fatalf("%s: doc %s tokens %q, Python %q", c.name, d.ID, got, ref.DocTokens[i])
		}
	}
	worst := 0.0
	for qi, q := range c.queries {
		if got := analyze(nil, q); !reflect.DeepEqual(got, ref.QueryTokens[qi]) && !(len(got) == 0 && len(ref.QueryTokens[qi]) == 0) {
			t.Fatalf("%s: query %d tokens %q, Python %q", c.name, qi, got, ref.QueryTokens[qi])
		}
		scores := m.Scores(q)
		want := ref.Scores[qi]
		for d := range want {
			diff := math.Abs(scores[d]-want[d]) / math.Max(1, math.Abs(want[d]))
			worst = math.Max(worst, diff)
			if diff > tol {
				t.Fatalf("%s: %s query %d doc %d: score %.17g, reference %.17g", c.name, m.Name(), qi, d, scores[d], want[d])
			}
		}
		// Expected top 10 from the reference scores: positive scores, descending, ties by corpus order.
		var order []int
		for d, s := range want {
			if s > 0 {
				order = append(order, d)
			}
		}
		sort.SliceStable(order, func(a, b int) bool { return want[order[a]] > want[order[b]] })
		if len(order) > 10 {
			order = order[:10]
		}
		got, err := m.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(order) {
			t.Fatalf("%s: %s query %d: Search returned %d candidates, reference has %d positive", c.name, m.Name(), qi, len(got), len(order))
		}
		for r := range got {
			if got[r].Index != order[r] && math.Abs(want[got[r].Index]-want[order[r]]) > tol {
				t.Fatalf("%s: %s query %d rank %d: doc %d (ref score %.17g), reference ranks doc %d (%.17g)",
					c.name, m.Name(), qi, r, got[r].Index, want[got[r].Index], order[r], want[order[r]])
			}
			if got[r].ID != c.docs[got[r].Index].ID {
				t.Fatalf("%s: candidate %+v has the wrong id", c.name, got[r])
			}
		}
	}
	t.Logf("%s: %s over %d docs x %d queries, largest relative difference %.3g", c.name, m.Name(), len(c.docs), len(c.queries), worst)
}

// TestBM25MatchesRankBM25 checks every BM25 score against rank-bm25's BM25Okapi to 1e-9 on real
// tool descriptions and real ToolBench queries, with the defaults and with other k1/b/epsilon.
func TestBM25MatchesRankBM25(t *testing.T) {
	corpora := refCorpora(t)
	// The IDF floor must really be exercised: "the" occurs in more than half of the ToolBench
	// queries, so its raw idf is negative and BM25 uses the floor.
	tb := corpora[1]
	df := 0
	for _, d := range tb.docs {
		for _, tok := range Tokenize(DocText(d)) {
			if tok == "the" {
				df++
				break
			}
		}
	}
	if n := float64(len(tb.docs)); math.Log(n-float64(df)+0.5)-math.Log(float64(df)+0.5) >= 0 {
		t.Fatalf("corpus %s: \"the\" is in %d of %d documents; the IDF floor is not exercised", tb.name, df, len(tb.docs))
	}
	for i, p := range []BM25Params{DefaultBM25Params(), {K1: 0.9, B: 0.4, Epsilon: 0.1}, {K1: 2.0, B: 1.0, Epsilon: 0.5}} {
		for _, c := range corpora {
			if i > 0 && len(c.queries) > 400 {
				// Other parameters: every 4th query keeps the run short (rank-bm25 is slow).
				var fewer []string
				for j := 0; j < len(c.queries); j += 4 {
					fewer = append(fewer, c.queries[j])
				}
				c.queries = fewer
			}
			ref := runLexicalRef(t, refInput{Model: "bm25", Docs: refDocs(c.docs), Queries: c.queries, K1: p.K1, B: p.B, Epsilon: p.Epsilon})
			checkAgainstRef(t, c, NewBM25(c.docs, p), ref, 1e-9)
		}
	}
}

// TestTFIDFMatchesScikitLearn checks every TF-IDF cosine against scikit-learn's TfidfVectorizer
// with the same settings.
func TestTFIDFMatchesScikitLearn(t *testing.T) {
	for _, sub := range []bool{false, true} {
		for _, c := range refCorpora(t) {
			ref := runLexicalRef(t, refInput{Model: "tfidf", Docs: refDocs(c.docs), Queries: c.queries, Sublinear: sub})
			checkAgainstRef(t, c, NewTFIDF(c.docs, TFIDFParams{Sublinear: sub}), ref, 1e-9)
		}
	}
}

// TestLuceneBM25MatchesBM25s checks every score of the English BM25 (Pyserini's k1 = 0.9,
// b = 0.4, and another pair) against bm25s's Lucene variant in float64, and its terms against the
// documented chain run with PyStemmer's Porter stemmer, on real tool descriptions and queries plus
// possessive and stop-word cases.
func TestLuceneBM25MatchesBM25s(t *testing.T) {
	extra := []string{"the user's calendar's events", "it's O’Reilly’s book", "James' Slack's channel", "a's's", "users'", "THE BOSS'S BOSSES", "'s alone", "is it not so"}
	for i, p := range []LuceneBM25Params{PyseriniBM25Params(), {K1: 1.2, B: 0.75}} {
		for _, c := range refCorpora(t) {
			c.queries = append(c.queries, extra...)
			if i > 0 {
				c.queries = c.queries[len(c.queries)/2:]
			}
			ref := runLexicalRef(t, refInput{Model: "bm25-lucene", Docs: refDocs(c.docs), Queries: c.queries, K1: p.K1, B: p.B})
			checkAnalyzedAgainstRef(t, c, NewLuceneBM25(c.docs, p), EnglishAnalyzer, ref, 1e-9)
		}
	}
}

// TestPorterStemMatchesPyStemmer stems every word of the default benchmark, the ToolBench
// queries and Porter's own examples with PorterStem and with PyStemmer's Stemmer("porter").
func TestPorterStemMatchesPyStemmer(t *testing.T) {
	python := testassets.Python(t)
	words := map[string]bool{}
	for _, c := range refCorpora(t) {
		for _, d := range c.docs {
			for _, w := range Tokenize(DocText(d)) {
				words[w] = true
			}
		}
		for _, q := range c.queries {
			for _, w := range Tokenize(q) {
				words[w] = true
			}
		}
	}
	for _, w := range strings.Fields(`caresses ponies ties caress cats feed agreed plastered bled motoring sing
		conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky relational
		conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli
		vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti
		sensibiliti triplicate formative formalize electriciti electrical hopeful goodness revival allowance
		inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption
		homologou communism activate angulariti homologous effective bowdlerize probate rate cease controll
		roll generalizations oscillators yay sayyid ayyy y ys s as is us abyss flying dying toy toys enjoyed
		crying obeying played happiness naïve café résumés 42nd 2000s x`) {
		words[w] = true
	}
	list := make([]string, 0, len(words))
	for w := range words {
		list = append(list, w)
	}
	sort.Strings(list)
	cmd := exec.Command(python, "-c", `import sys, json, Stemmer
print(json.dumps(Stemmer.Stemmer("porter").stemWords(json.load(sys.stdin))))`)
	raw, _ := json.Marshal(list)
	cmd.Stdin = strings.NewReader(string(raw))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("PyStemmer: %v", err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil || len(want) != len(list) {
		t.Fatalf("PyStemmer output: %v (%d stems for %d words)", err, len(want), len(list))
	}
	for i, w := range list {
		if got := PorterStem(w); got != want[i] {
			t.Errorf("PorterStem(%q) = %q, PyStemmer %q", w, got, want[i])
		}
	}
	t.Logf("%d words stemmed alike", len(list))
}
