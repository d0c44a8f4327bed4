package retrieve

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/rated-dev/rated/internal/atomicfile"
	"github.com/rated-dev/rated/internal/vecmath"
)

// IVFParams configures the inverted-file index.
type IVFParams struct {
	// Lists is the number of inverted lists (k-means centroids); 0 picks 2·√N, capped at N.
	Lists int
	// Probes is the number of lists, nearest the query, that a search scans: the recall knob.
	Probes int
	// Rescore is the shortlist of the int8 scan re-scored in float32 (at least k).
	Rescore int
	// Sample is the number of vectors k-means trains on; 0 picks 32 per list, capped at N.
	Sample int
	// Iterations is the number of k-means rounds.
	Iterations int
	// Seed seeds the training sample and the first centroids (a deterministic index).
	Seed uint64
}

// DefaultIVFParams are the parameters measured in docs/BENCHMARKS.md (1M tools).
func DefaultIVFParams() IVFParams {
	return IVFParams{Lists: 0, Probes: 32, Rescore: 100, Sample: 0, Iterations: 10, Seed: 1}
}

// resolved fills the automatic sizes for a corpus of n documents.
func (p IVFParams) resolved(n int) IVFParams {
	if p.Lists == 0 {
		p.Lists = max(1, int(math.Round(2*math.Sqrt(float64(n)))))
	}
	p.Lists = min(p.Lists, max(1, n))
	if p.Sample == 0 {
		p.Sample = 32 * p.Lists
	}
	p.Sample = max(p.Lists, min(p.Sample, n))
	return p
}

// Validate refuses parameters that cannot build or search the lists (0 lists or sample: automatic).
func (p IVFParams) Validate() error {
	if p.Lists < 0 || p.Probes < 1 || p.Rescore < 1 || p.Sample < 0 || p.Iterations < 0 {
		return fmt.Errorf("ivf: lists %d, sample %d, iterations %d (want >= 0), probes %d and rescore %d (want >= 1)",
			p.Lists, p.Sample, p.Iterations, p.Probes, p.Rescore)
	}
	return nil
}

// key describes what the lists depend on (Probes and Rescore are search settings).
func (p IVFParams) key() string {
	return fmt.Sprintf("ivf lists=%d sample=%d iterations=%d seed=%d", p.Lists, p.Sample, p.Iterations, p.Seed)
}

// IVF is an approximate dense retriever over a Dense index: an inverted file. Spherical k-means
// on a sample of the corpus gives Lists centroids; every document is filed under its nearest
// centroid. A query scans only the Probes lists whose centroids score highest, over int8
// scalar-quantised codes stored list by list (a quarter of the float32 bytes, the quantisation
// of Int8Dense), keeps the Rescore best and re-scores them by float32 dot product. Build it with
// NewIVF, or load or build-and-save it beside the embeddings with OpenIVF. Search is safe for
// concurrent use; the index is never modified after it is built.
type IVF struct {
	dense     *Dense
	params    IVFParams // resolved for the corpus
	centroids []float32 // Lists×dim, unit rows
	offsets   []int32   // list l holds members[offsets[l]:offsets[l+1]]
	members   []int32   // document indexes, list by list
	codes     []int8    // int8 codes of members, in the same order
}

var _ Retriever = (*IVF)(nil)

// NewIVF trains the centroids and files every document of d; progress, when set, hears of each
// stage (done of total stages).
func NewIVF(d *Dense, p IVFParams, progress func(done, total int)) (*IVF, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	n := d.Len()
	if n == 0 {
		return nil, fmt.Errorf("ivf %s: empty corpus", d.enc.Name())
	}
	p = p.resolved(n)
	step := func(i int) {
		if progress != nil {
			progress(i, 3)
		}
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x1f5))
	sample := make([]float32, p.Sample*d.dim)
	for i, r := range partialPerm(rng, n, p.Sample) {
		copy(sample[i*d.dim:(i+1)*d.dim], d.matrix[r*d.dim:(r+1)*d.dim])
	}
	cents, _, err := SphericalKMeans(sample, p.Sample, d.dim, p.Lists, p.Iterations, rng)
	if err != nil {
		return nil, fmt.Errorf("ivf %s: %w", d.enc.Name(), err)
	}
	step(1)
	assign := make([]int32, n)
	NearestCentroids(d.matrix, n, d.dim, cents, p.Lists, assign)
	step(2)
	v := &IVF{dense: d, params: p, centroids: cents}
	v.fileDocuments(assign)
	step(3)
	return v, nil
}

// fileDocuments builds the lists from every document's list (a counting sort, documents in
// corpus order within a list) and their int8 codes.
func (v *IVF) fileDocuments(assign []int32) {
	lists := v.params.Lists
	v.offsets = make([]int32, lists+1)
	for _, a := range assign {
		v.offsets[a+1]++
	}
	for l := range lists {
		v.offsets[l+1] += v.offsets[l]
	}
	fill := append([]int32(nil), v.offsets[:lists]...)
	v.members = make([]int32, len(assign))
	for i, a := range assign {
		v.members[fill[a]] = int32(i)
		fill[a]++
	}
	v.fillCodes()
}

// fillCodes quantises the members list by list, with Int8Dense's corpus-wide scale.
func (v *IVF) fillCodes() {
	d := v.dense
	q8, _ := NewInt8Dense(d, 1)
	v.codes = make([]int8, len(q8.codes))
	for pos, i := range v.members {
		copy(v.codes[pos*d.dim:(pos+1)*d.dim], q8.codes[int(i)*d.dim:(int(i)+1)*d.dim])
	}
}

// Name is "ivf:" and the encoder's name.
func (v *IVF) Name() string { return "ivf:" + v.dense.enc.Name() }

// Len is the number of indexed documents.
func (v *IVF) Len() int { return len(v.members) }

// Params are the index's parameters, with the automatic sizes resolved.
func (v *IVF) Params() IVFParams { return v.params }

// WithSearch returns a view of the same index that scans probes lists and re-scores rescore
// documents per query (the lists are shared, not copied).
func (v *IVF) WithSearch(probes, rescore int) (*IVF, error) {
	p := v.params
	p.Probes, p.Rescore = probes, rescore
	if err := p.Validate(); err != nil {
		return nil, err
	}
	w := *v
	w.params = p
	return &w, nil
}

// MemoryBytes is the size of the index's own arrays (centroids, lists and int8 codes; the
// float32 matrix of the Dense, used for re-scoring, is not counted).
func (v *IVF) MemoryBytes() int64 {
	return int64(4*len(v.centroids) + 4*len(v.offsets) + 4*len(v.members) + len(v.codes))
}

// Search embeds the query with the dense retriever's encoder and searches the index.
func (v *IVF) Search(query string, k int) ([]Candidate, error) {
	q, err := v.dense.embedQueries([]string{query})
	if err != nil {
		return nil, err
	}
	return v.SearchVector(q[0], k)
}

// SearchVector scans the Probes lists nearest an embedded query and returns the k best of the
// Rescore best int8 scores, re-scored by float32 dot product, best first, ties by corpus order.
// When the probed lists hold fewer than k documents it returns them all, fewer than k (more
// probes, or fewer lists, fill the list).
func (v *IVF) SearchVector(q []float32, k int) ([]Candidate, error) {
	d := v.dense
	if len(q) != d.dim {
		return nil, fmt.Errorf("ivf %s: query vector has %d values, want %d", d.enc.Name(), len(q), d.dim)
	}
	n := len(v.members)
	if k <= 0 || n == 0 {
		return nil, nil
	}
	lists := v.params.Lists
	listScores := make([]float32, lists)
	blas32.Gemv(blas.NoTrans, 1,
		blas32.General{Rows: lists, Cols: d.dim, Stride: d.dim, Data: v.centroids},
		blas32.Vector{N: d.dim, Inc: 1, Data: q}, 0,
		blas32.Vector{N: lists, Inc: 1, Data: listScores})
	probes := newTopK(min(v.params.Probes, lists))
	probes.pushRow(listScores, 0)
	qv := quantiseQuery(q)
	short := newTopK(min(n, max(k, v.params.Rescore)))
	var scores []int32
	for _, l := range probes.index {
		lo, hi := int(v.offsets[l]), int(v.offsets[l+1])
		if hi == lo {
			continue
		}
		if cap(scores) < hi-lo {
			scores = make([]int32, hi-lo)
		}
		scores = scores[:hi-lo]
		vecmath.DotInt8Rows(qv, v.codes[lo*d.dim:hi*d.dim], hi-lo, d.dim, scores)
		for j, s := range scores {
			if f := float32(s); len(short.score) < short.k || f >= short.score[0] {
				short.push(f, v.members[lo+j])
			}
		}
	}
	return rescoreFloat32(d, q, short.index, k), nil
}

// rescoreFloat32 returns the k best of the documents idx of d by float32 dot product with q,
// best first, ties by corpus order.
func rescoreFloat32(d *Dense, q []float32, idx []int32, k int) []Candidate {
	top := newTopK(min(k, len(idx)))
	for _, i := range idx {
		var s float32
		for j, x := range d.matrix[int(i)*d.dim : (int(i)+1)*d.dim] {
			s += x * q[j]
		}
		top.push(s, i)
	}
	return top.candidates(d.ids)
}

const ivfMagic = "RATEDIVF1 "

// Save writes the centroids and the lists to path atomically, behind a header that records the
// corpus key (the int8 codes are recomputed from the Dense on load).
func (v *IVF) Save(path string) error {
	return v.save(path, indexKey(v.dense, v.params.key()))
}

// save writes the index under its corpus key (hashing a 1M-vector corpus takes seconds).
func (v *IVF) save(path, key string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("ivf index %s: %w", path, err)
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<20)
		if _, err := io.WriteString(bw, ivfMagic+key+"\n"); err != nil {
			return err
		}
		for _, x := range []any{int64(v.params.Lists), int64(v.dense.dim), int64(len(v.members)), v.centroids, v.offsets, v.members} {
			if err := binary.Write(bw, binary.LittleEndian, x); err != nil {
				return err
			}
		}
		return bw.Flush()
	})
}

// LoadIVF reads an index saved by Save for the same corpus and parameters, checking that its
// lists hold every document exactly once.
func LoadIVF(d *Dense, p IVFParams, path string) (*IVF, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.resolved(d.Len())
	return loadIVF(d, p, path, indexKey(d, p.key()))
}

// loadIVF reads the index at path, which must carry key, for d and the resolved parameters p.
func loadIVF(d *Dense, p IVFParams, path, key string) (*IVF, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ivf index %s: %w", path, err)
	}
	defer f.Close()
	v, err := readIVF(d, p, key, bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("ivf index %s: %w (delete it to rebuild)", path, err)
	}
	return v, nil
}

// readIVF parses a saved index for d with the resolved parameters p and corpus key want.
func readIVF(d *Dense, p IVFParams, want string, r *bufio.Reader) (*IVF, error) {
	head, err := r.ReadString('\n')
	if err != nil || len(head) < len(ivfMagic) || head[:len(ivfMagic)] != ivfMagic {
		return nil, errors.New("not a rated IVF index")
	}
	if got := head[len(ivfMagic) : len(head)-1]; got != want {
		return nil, fmt.Errorf("built for another corpus or parameters (key %s, want %s)", got, want)
	}
	var sizes [3]int64
	if err := binary.Read(r, binary.LittleEndian, &sizes); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	n := d.Len()
	if sizes != [3]int64{int64(p.Lists), int64(d.dim), int64(n)} {
		return nil, fmt.Errorf("sizes %v, want lists %d, dim %d, documents %d", sizes, p.Lists, d.dim, n)
	}
	v := &IVF{dense: d, params: p, centroids: make([]float32, p.Lists*d.dim),
		offsets: make([]int32, p.Lists+1), members: make([]int32, n)}
	for _, x := range []any{v.centroids, v.offsets, v.members} {
		if err := binary.Read(r, binary.LittleEndian, x); err != nil {
			return nil, fmt.Errorf("truncated: %w", err)
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		return nil, errors.New("trailing bytes after the lists")
	}
	if v.offsets[0] != 0 || v.offsets[p.Lists] != int32(n) {
		return nil, fmt.Errorf("lists cover [%d, %d), want [0, %d)", v.offsets[0], v.offsets[p.Lists], n)
	}
	for l := range p.Lists {
		if v.offsets[l+1] < v.offsets[l] {
			return nil, fmt.Errorf("list %d ends at %d before it starts at %d", l, v.offsets[l+1], v.offsets[l])
		}
	}
	seen := make([]bool, n)
	for pos, i := range v.members {
		if i < 0 || int(i) >= n || seen[i] {
			return nil, fmt.Errorf("list entry %d: document %d out of range or filed twice", pos, i)
		}
		seen[i] = true
	}
	for _, x := range v.centroids {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, errors.New("a centroid is not finite")
		}
	}
	v.fillCodes()
	return v, nil
}

// OpenIVF loads the index of d saved under dir (typically beside the embedding cache), or builds
// it and saves it there; built reports which happened. The file name carries a sha256 of the
// document ids and vectors and of the build parameters, so a changed corpus or model never
// reads stale lists.
func OpenIVF(d *Dense, p IVFParams, dir string, progress func(done, total int)) (v *IVF, built bool, err error) {
	if err := p.Validate(); err != nil {
		return nil, false, err
	}
	rp := p.resolved(d.Len())
	key := indexKey(d, rp.key())
	path := filepath.Join(dir, "ivf-"+key+".lists")
	if _, statErr := os.Stat(path); statErr == nil {
		v, err := loadIVF(d, rp, path, key)
		return v, false, err
	} else if !errors.Is(statErr, os.ErrNotExist) {
		return nil, false, fmt.Errorf("ivf index %s: %w", path, statErr)
	}
	if v, err = NewIVF(d, p, progress); err != nil {
		return nil, false, err
	}
	return v, true, v.save(path, key)
}
