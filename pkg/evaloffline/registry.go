package evaloffline

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/pkg/bench"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// Env is what a Factory may use to build a retriever.
type Env struct {
	Ctx context.Context
	// Bench is the benchmark being evaluated; retrievers index Bench.Corpus.
	Bench *bench.Bench
	// Encoders opens the encoders that dense retrievers name (installed model folders of the
	// asset home, paths, openai:URL endpoints).
	Encoders retrieve.EncoderSource
	// Log receives plain progress lines.
	Log io.Writer
	// Progress, when set, receives (done, total) while a factory does long work such as
	// encoding the corpus (a progress bar on a terminal, plain lines otherwise).
	Progress func(done, total int)
}

// Factory builds a retriever over env.Bench.Corpus. arg is what follows the family prefix of a
// name such as "dense:bge-small-en-v1.5" or "bm25:k1=1.2,b=0.75" ("" for a plain name). A
// retriever that also implements io.Closer is closed after its evaluation.
type Factory func(env Env, arg string) (retrieve.Retriever, error)

// Registry maps the retriever names accepted by --retrievers to factories. A name registered
// with a trailing colon ("dense:") is a family: "dense:X" calls its factory with arg "X".
type Registry struct {
	entries map[string]registryEntry
}

type registryEntry struct {
	help    string
	factory Factory
	check   Check
}

// Check validates the argument of a name without building anything (no corpus encoded, no model
// opened), so that a wrong name fails before the retrievers listed before it have run.
type Check func(env Env, arg string) error

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{entries: map[string]registryEntry{}} }

// Register adds a retriever name (or a family, ending in ":"); registering a name twice is an
// error.
func (r *Registry) Register(name, help string, f Factory) error {
	if name == "" || strings.ContainsAny(name, " \t,") {
		return fmt.Errorf("retriever name %q: must be non-empty without spaces or commas", name)
	}
	if _, dup := r.entries[name]; dup {
		return fmt.Errorf("retriever %q registered twice", name)
	}
	r.entries[name] = registryEntry{help: help, factory: f}
	return nil
}

// SetCheck gives the registered name (or family) a Check.
func (r *Registry) SetCheck(name string, c Check) error {
	e, ok := r.entries[name]
	if !ok {
		return fmt.Errorf("retriever %q is not registered", name)
	}
	e.check = c
	r.entries[name] = e
	return nil
}

// Check reports whether name resolves and, where its family has a Check, whether its argument
// is valid; the error names the retriever.
func (r *Registry) Check(name string, env Env) error {
	e, arg, ok := r.lookup(name)
	if !ok {
		return fmt.Errorf("unknown retriever %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	if e.check != nil {
		if err := e.check(env, arg); err != nil {
			return fmt.Errorf("retriever %s: %w", name, err)
		}
	}
	return nil
}

// Names lists the registered names and families, sorted, each with its help text.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.entries))
	for n, e := range r.entries {
		if strings.HasSuffix(n, ":") {
			n += "…"
		}
		out = append(out, n+" ("+e.help+")")
	}
	sort.Strings(out)
	return out
}

// Has reports whether name resolves to a registered retriever or family.
func (r *Registry) Has(name string) bool {
	_, _, ok := r.lookup(name)
	return ok
}

func (r *Registry) lookup(name string) (registryEntry, string, bool) {
	if e, ok := r.entries[name]; ok && !strings.HasSuffix(name, ":") {
		return e, "", true
	}
	if family, arg, ok := strings.Cut(name, ":"); ok && arg != "" {
		if e, ok := r.entries[family+":"]; ok {
			return e, arg, true
		}
	}
	return registryEntry{}, "", false
}

// Build constructs the retriever called name.
func (r *Registry) Build(name string, env Env) (retrieve.Retriever, error) {
	e, arg, ok := r.lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown retriever %q (known: %s)", name, strings.Join(r.Names(), ", "))
	}
	ret, err := e.factory(env, arg)
	if err != nil {
		return nil, fmt.Errorf("retriever %s: %w", name, err)
	}
	return ret, nil
}

// NewLexicalRegistry returns a registry with the lexical baselines:
//
//	bm25                 Okapi BM25, k1=1.5 b=0.75 epsilon=0.25 (rank-bm25 BM25Okapi)
//	bm25:k1=X,b=Y,eps=Z  BM25 with other parameters (any subset)
//	bm25-en              BM25 as Lucene scores it over Lucene's English analysis (possessives,
//	                     stop words, Porter stemming), Pyserini's k1=0.9 b=0.4 (bm25s "lucene")
//	bm25-en:k1=X,b=Y     the same with other parameters
//	tfidf                TF-IDF cosine, raw tf, smoothed idf (scikit-learn TfidfVectorizer)
//	tfidf-sublinear      the same with 1 + ln(tf)
//
// Other engineers' retrievers (dense encoders, the reranker, RATED variants) are added with
// Register by the command that wires them.
func NewLexicalRegistry() *Registry {
	r := NewRegistry()
	must := func(err error) {
		if err != nil {
			panic(err) // fixed names above: cannot collide
		}
	}
	must(r.Register("bm25", "Okapi BM25, k1=1.5 b=0.75 as rank-bm25 BM25Okapi", func(env Env, _ string) (retrieve.Retriever, error) {
		return retrieve.NewBM25(env.Bench.Corpus, retrieve.DefaultBM25Params()), nil
	}))
	must(r.Register("bm25:", "BM25 with parameters, e.g. bm25:k1=1.2,b=0.75,eps=0.25", func(env Env, arg string) (retrieve.Retriever, error) {
		p, err := parseBM25Params(arg)
		if err != nil {
			return nil, err
		}
		return namedRetriever{retrieve.NewBM25(env.Bench.Corpus, p), fmt.Sprintf("BM25 (k1=%g, b=%g)", p.K1, p.B)}, nil
	}))
	must(r.Register("bm25-en", "BM25 over Lucene's English analysis (possessives, stop words, Porter), Pyserini's k1=0.9 b=0.4", func(env Env, _ string) (retrieve.Retriever, error) {
		return retrieve.NewLuceneBM25(env.Bench.Corpus, retrieve.PyseriniBM25Params()), nil
	}))
	must(r.Register("bm25-en:", "English BM25 with parameters, e.g. bm25-en:k1=1.2,b=0.75", func(env Env, arg string) (retrieve.Retriever, error) {
		lp, err := parseLuceneParams(arg)
		if err != nil {
			return nil, err
		}
		return retrieve.NewLuceneBM25(env.Bench.Corpus, lp), nil
	}))
	must(r.SetCheck("bm25:", func(_ Env, arg string) error { _, err := parseBM25Params(arg); return err }))
	must(r.SetCheck("bm25-en:", func(_ Env, arg string) error { _, err := parseLuceneParams(arg); return err }))
	must(r.Register("tfidf", "TF-IDF cosine, raw tf, smoothed idf", func(env Env, _ string) (retrieve.Retriever, error) {
		return retrieve.NewTFIDF(env.Bench.Corpus, retrieve.TFIDFParams{}), nil
	}))
	must(r.Register("tfidf-sublinear", "TF-IDF cosine, 1+ln(tf), smoothed idf", func(env Env, _ string) (retrieve.Retriever, error) {
		return namedRetriever{retrieve.NewTFIDF(env.Bench.Corpus, retrieve.TFIDFParams{Sublinear: true}), "TF-IDF (sublinear tf)"}, nil
	}))
	return r
}

// parseBM25Params parses "k1=1.2,b=0.75,eps=0.25" over the defaults.
func parseBM25Params(arg string) (retrieve.BM25Params, error) {
	p := retrieve.DefaultBM25Params()
	for _, kv := range strings.Split(arg, ",") {
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			return p, fmt.Errorf("parameter %q: want key=value", kv)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) { // NaN fails v >= 0
			return p, fmt.Errorf("parameter %q: want a finite non-negative number", kv)
		}
		switch key {
		case "k1":
			p.K1 = v
		case "b":
			if v > 1 {
				return p, fmt.Errorf("parameter %q: b must be in [0, 1]", kv)
			}
			p.B = v
		case "eps", "epsilon":
			p.Epsilon = v
		default:
			return p, fmt.Errorf("parameter %q: unknown (want k1, b or eps)", kv)
		}
	}
	return p, nil
}

// namedRetriever overrides the display name of a retriever and keeps its batch search.
type namedRetriever struct {
	retrieve.Retriever
	name string
}

func (n namedRetriever) Name() string { return n.name }

// SearchBatch forwards to the wrapped retriever's batch search when it has one.
func (n namedRetriever) SearchBatch(queries []string, k int) ([][]retrieve.Candidate, error) {
	return searchAll(n.Retriever, queries, k)
}

// JoinParameters undoes the comma split of a list flag inside a name's parameters: a piece
// holding "=" but no ":" continues the name before it ("bm25-en:k1=1.2,b=0.75" arrives as
// "bm25-en:k1=1.2" and "b=0.75"); retriever names never hold "=" otherwise.
func JoinParameters(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		if n := len(out); n > 0 && strings.Contains(p, "=") && !strings.Contains(p, ":") && strings.Contains(out[n-1], "=") {
			out[n-1] += "," + p
			continue
		}
		out = append(out, p)
	}
	return out
}

// parseLuceneParams reads bm25-en's parameters: k1 and b, the ones not given at Pyserini's.
func parseLuceneParams(arg string) (retrieve.LuceneBM25Params, error) {
	p, err := parseBM25Params(arg)
	if err != nil {
		return retrieve.LuceneBM25Params{}, err
	}
	if strings.Contains(arg, "eps") {
		return retrieve.LuceneBM25Params{}, fmt.Errorf("parameter eps: the English BM25 has no IDF floor (want k1 and b)")
	}
	lp := retrieve.PyseriniBM25Params()
	for _, kv := range strings.Split(arg, ",") {
		switch key, _, _ := strings.Cut(kv, "="); key {
		case "k1":
			lp.K1 = p.K1
		case "b":
			lp.B = p.B
		}
	}
	return lp, nil
}

// RegisterFusion adds the "rrf:" family: "rrf:A+B[+C…]" fuses the registry retrievers A, B, …
// (each built as on its own, e.g. rrf:bm25-en+dense:bge-small-en-v1.5) by reciprocal-rank fusion
// (retrieve.RRF, k = 60, each part searched to at least depth 100). The parts are closed with
// the fused retriever.
func RegisterFusion(reg *Registry) error {
	if err := reg.Register("rrf:", "reciprocal-rank fusion of registry retrievers joined by +, e.g. rrf:bm25-en+dense:bge-small-en-v1.5", func(env Env, arg string) (retrieve.Retriever, error) {
		var parts []retrieve.Retriever
		closeAll := func() {
			for _, p := range parts {
				if c, ok := p.(io.Closer); ok {
					c.Close()
				}
			}
		}
		for _, name := range strings.Split(arg, "+") {
			if !reg.Has(name) {
				closeAll()
				return nil, fmt.Errorf("part %q: unknown retriever", name)
			}
			p, err := reg.Build(name, env)
			if err != nil {
				closeAll()
				return nil, err
			}
			parts = append(parts, p)
		}
		f, err := retrieve.NewRRF(parts...)
		if err != nil {
			closeAll()
			return nil, err
		}
		return fused{f, parts, closeAll}, nil
	}); err != nil {
		return err
	}
	return reg.SetCheck("rrf:", func(env Env, arg string) error {
		for _, name := range strings.Split(arg, "+") {
			if err := reg.Check(name, env); err != nil {
				return fmt.Errorf("part %q: %w", name, err)
			}
		}
		return nil
	})
}

// fused is a fusion that closes its parts and reports the first encoder among them.
type fused struct {
	*retrieve.RRF
	parts    []retrieve.Retriever
	closeAll func()
}

// Close closes every part.
func (f fused) Close() error {
	f.closeAll()
	return nil
}

// EncoderIdentity is the encoder of the first dense part (lexical parts have none).
func (f fused) EncoderIdentity() provenance.Encoder {
	for _, p := range f.parts {
		if e := provenance.EncoderOf(p); e != nil {
			return *e
		}
	}
	return provenance.Encoder{Name: f.Name()}
}
