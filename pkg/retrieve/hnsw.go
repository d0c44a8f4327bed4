package retrieve

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand"
	"os"
	"path/filepath"

	"github.com/coder/hnsw"

	"github.com/rated-dev/rated/internal/atomicfile"
)

// HNSWParams configures the approximate index.
type HNSWParams struct {
	// M is the most neighbours kept per node and layer.
	M int
	// EfConstruction is the candidate queue of the searches that insert a node.
	EfConstruction int
	// Candidates is how many nodes a query takes from the graph before they are re-scored
	// exactly and cut to k (at least k): the recall knob of Search.
	Candidates int
	// Seed seeds the level of every node: one graph per corpus and seed, byte for byte
	// (third_party/hnsw iterates in key order where upstream followed Go's random map order).
	Seed int64
}

// DefaultHNSWParams are the parameters measured in docs/BENCHMARKS.md (1M tools).
func DefaultHNSWParams() HNSWParams {
	return HNSWParams{M: 16, EfConstruction: 100, Candidates: 100, Seed: 1}
}

// Validate refuses parameters that cannot build or search a graph.
func (p HNSWParams) Validate() error {
	if p.M < 2 || p.EfConstruction < 1 || p.Candidates < 1 {
		return fmt.Errorf("hnsw: M %d (want >= 2), ef_construction %d and candidates %d (want >= 1)", p.M, p.EfConstruction, p.Candidates)
	}
	return nil
}

// HNSW is an approximate dense retriever over a Dense index: a Hierarchical Navigable Small
// World graph (github.com/coder/hnsw) proposes Candidates nodes for a query, which are re-scored
// by exact dot product and cut to k. Build it once with NewHNSW, or load or build-and-save it
// beside the embeddings with OpenHNSW. Search is safe for concurrent use; the graph is never
// modified after it is built.
type HNSW struct {
	dense  *Dense
	graph  *hnsw.Graph[int32]
	params HNSWParams
}

var _ Retriever = (*HNSW)(nil)

// NewHNSW builds the graph over every document of d.
func NewHNSW(d *Dense, p HNSWParams, progress func(done, total int)) (*HNSW, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	g := newGraph(p)
	n := d.Len()
	const step = 1000
	for start := 0; start < n; start += step {
		end := min(n, start+step)
		nodes := make([]hnsw.Node[int32], 0, end-start)
		for i := start; i < end; i++ {
			// The graph keeps a view of the dense matrix: no copy of the vectors.
			nodes = append(nodes, hnsw.MakeNode(int32(i), hnsw.Vector(d.matrix[i*d.dim:(i+1)*d.dim:(i+1)*d.dim])))
		}
		g.Add(nodes...)
		if progress != nil {
			progress(end, n)
		}
	}
	g.EfSearch = p.Candidates
	return &HNSW{dense: d, graph: g, params: p}, nil
}

func newGraph(p HNSWParams) *hnsw.Graph[int32] {
	g := hnsw.NewGraph[int32]()
	g.M = p.M
	g.EfSearch = p.EfConstruction
	g.Distance = hnsw.CosineDistance // unit vectors: 1 - dot; a named distance, so the graph can be saved
	g.Rng = rand.New(rand.NewSource(p.Seed))
	return g
}

// Name is "hnsw:" and the encoder's name.
func (h *HNSW) Name() string { return "hnsw:" + h.dense.enc.Name() }

// Len is the number of indexed documents.
func (h *HNSW) Len() int { return h.graph.Len() }

// Search embeds the query with the dense retriever's encoder and searches the graph.
func (h *HNSW) Search(query string, k int) ([]Candidate, error) {
	q, err := h.dense.embedQueries([]string{query})
	if err != nil {
		return nil, err
	}
	return h.SearchVector(q[0], k)
}

// SearchVector returns the k best of the graph's candidates for an embedded query, re-scored
// by exact dot product, best first, ties by corpus order.
func (h *HNSW) SearchVector(q []float32, k int) ([]Candidate, error) {
	d := h.dense
	if len(q) != d.dim {
		return nil, fmt.Errorf("hnsw %s: query vector has %d values, want %d", d.enc.Name(), len(q), d.dim)
	}
	if k <= 0 || d.Len() == 0 {
		return nil, nil
	}
	nodes := h.graph.Search(q, max(k, h.params.Candidates))
	top := newTopK(min(k, len(nodes)))
	for _, n := range nodes {
		i := int(n.Key)
		var s float32
		for j, x := range d.matrix[i*d.dim : (i+1)*d.dim] {
			s += x * q[j]
		}
		top.push(s, n.Key)
	}
	return top.candidates(d.ids), nil
}

// Save writes the graph to path atomically (coder/hnsw's export format behind a header that
// records the parameters and the corpus key).
func (h *HNSW) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("hnsw index %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := io.WriteString(bw, hnswMagic+corpusKey(h.dense, h.params)+"\n"); err != nil {
			return err
		}
		if err := h.graph.Export(bw); err != nil {
			return err
		}
		return bw.Flush()
	})
}

const hnswMagic = "RATEDHNSW1 "

// LoadHNSW reads a graph saved by Save for the same corpus and parameters.
func LoadHNSW(d *Dense, p HNSWParams, path string) (*HNSW, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("hnsw index %s: %w", path, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head, err := br.ReadString('\n')
	if err != nil || len(head) < len(hnswMagic) || head[:len(hnswMagic)] != hnswMagic {
		return nil, fmt.Errorf("hnsw index %s: not a rated HNSW index (delete it to rebuild)", path)
	}
	if got, want := head[len(hnswMagic):len(head)-1], corpusKey(d, p); got != want {
		return nil, fmt.Errorf("hnsw index %s: built for another corpus or parameters (key %s, want %s; delete it to rebuild)", path, got, want)
	}
	g := newGraph(p)
	if err := g.Import(br); err != nil {
		return nil, fmt.Errorf("hnsw index %s: %w", path, err)
	}
	if g.Len() != d.Len() {
		return nil, fmt.Errorf("hnsw index %s: %d nodes for %d documents (delete it to rebuild)", path, g.Len(), d.Len())
	}
	g.EfSearch = p.Candidates
	return &HNSW{dense: d, graph: g, params: p}, nil
}

// OpenHNSW loads the index of d saved under dir (typically beside the embedding cache), or
// builds it and saves it there; built reports which happened. The file name carries a sha256
// of the document ids and vectors and of the build parameters, so a changed corpus or model
// never reads a stale graph.
func OpenHNSW(d *Dense, p HNSWParams, dir string, progress func(done, total int)) (h *HNSW, built bool, err error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	path := filepath.Join(dir, "hnsw-"+corpusKey(d, p)+".graph")
	if _, statErr := os.Stat(path); statErr == nil {
		h, err := LoadHNSW(d, p, path)
		return h, false, err
	} else if !errors.Is(statErr, os.ErrNotExist) {
		return nil, false, fmt.Errorf("hnsw index %s: %w", path, statErr)
	}
	if h, err = NewHNSW(d, p, progress); err != nil {
		return nil, false, err
	}
	return h, true, h.Save(path)
}

// corpusKey hashes what a graph depends on: the ids, the vectors and the build parameters
// (Candidates is a search setting and is left out).
func corpusKey(d *Dense, p HNSWParams) string {
	return indexKey(d, fmt.Sprintf("M=%d ef=%d seed=%d", p.M, p.EfConstruction, p.Seed))
}

// indexKey hashes what a saved index of d depends on: its build parameters (described by
// params), the ids and the vectors.
func indexKey(d *Dense, params string) string {
	sum := sha256.New()
	fmt.Fprintf(sum, "%s dim=%d n=%d\n", params, d.dim, len(d.ids))
	for _, id := range d.ids {
		sum.Write([]byte(id))
		sum.Write([]byte{0})
	}
	buf := make([]byte, 0, 4*4096)
	for i, x := range d.matrix {
		buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
		if len(buf) == cap(buf) || i == len(d.matrix)-1 {
			sum.Write(buf)
			buf = buf[:0]
		}
	}
	return hex.EncodeToString(sum.Sum(nil))[:24]
}
