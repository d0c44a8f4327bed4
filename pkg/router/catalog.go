package router

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"sync"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/state"
)

// catalogView is one immutable version of the live catalog: Select reads it without locks and
// catalog changes replace it whole (copy on write).
type catalogView struct {
	entries []*entry          // by tool index, removed ones included
	byID    map[string]*entry // every id ever seen
	live    []*entry          // not removed, by index
	priors  []float64         // r_static by tool index
	parts   []*catalog.PriorScore
	index   Index // search over live
	// calibrator is the router's calibrator bound to this view's tool indices (nil: none).
	calibrator *bandit.Calibrator
}

// bindCalibrator returns c bound to the tool indices of entries (nil for nil).
func bindCalibrator(c *bandit.Calibrator, entries []*entry) *bandit.Calibrator {
	if c == nil {
		return nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.tool.ID
	}
	return c.ForTools(ids)
}

// withCalibrator returns a copy of v whose calibrator is c bound to v's tools (views are
// immutable: Select reads them without locks).
func (v *catalogView) withCalibrator(c *bandit.Calibrator) *catalogView {
	next := *v
	next.calibrator = bindCalibrator(c, v.entries)
	return &next
}

// buildView indexes the live entries and computes their priors.
func (r *Router) buildView(entries []*entry) (*catalogView, error) {
	v := &catalogView{entries: entries, byID: make(map[string]*entry, len(entries)), priors: make([]float64, len(entries)),
		parts: make([]*catalog.PriorScore, len(entries))}
	var tools []catalog.Tool
	var vecs [][]float32
	for _, e := range entries {
		v.byID[e.tool.ID] = e
		if e.removed {
			continue
		}
		v.live = append(v.live, e)
		tools = append(tools, e.tool)
		vecs = append(vecs, e.vector)
	}
	if _, dense := r.front.(*DenseFrontend); !dense {
		vecs = nil
	}
	// The prior's quality part compares each tool with the catalog's medians, so every prior
	// is recomputed; the consistency (an encoder cosine) comes from the memo.
	if err := catalog.ComputePriors(tools, r.cfg.Prior, r.memo); err != nil {
		return nil, err
	}
	for i, e := range v.live {
		v.priors[e.index], v.parts[e.index] = tools[i].Prior.Value, tools[i].Prior
	}
	ix, err := r.front.Index(tools, vecs)
	if err != nil {
		return nil, err
	}
	v.index = ix
	v.calibrator = bindCalibrator(r.calibrator, entries)
	return v, nil
}

// memoSimilarity remembers the prior's consistency per (name, description) pair, so priors
// can be recomputed over the whole catalog at every change without encoding anything twice,
// and stores each tool's value with it in the state.
type memoSimilarity struct {
	inner catalog.Similarity
	mu    sync.Mutex
	memo  map[[32]byte]float64
}

func newMemoSimilarity(inner catalog.Similarity) *memoSimilarity {
	return &memoSimilarity{inner: inner, memo: map[[32]byte]float64{}}
}

func pairKey(a, b string) [32]byte {
	h := sha256.New()
	h.Write([]byte(a))
	h.Write([]byte{0})
	h.Write([]byte(b))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (m *memoSimilarity) Name() string { return m.inner.Name() }

func (m *memoSimilarity) Similarity(a, b string) (float64, error) {
	k := pairKey(a, b)
	m.mu.Lock()
	v, ok := m.memo[k]
	m.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := m.inner.Similarity(a, b)
	if err != nil {
		return 0, err
	}
	m.put(k, v)
	return v, nil
}

// Similarities implements catalog.BatchSimilarity: the pairs not remembered go to the inner
// similarity in one call when it can batch (an encoder embeds them in one pass).
func (m *memoSimilarity) Similarities(a, b []string) ([]float64, error) {
	out := make([]float64, len(a))
	var missA, missB []string
	var missAt []int
	m.mu.Lock()
	for i := range a {
		if v, ok := m.memo[pairKey(a[i], b[i])]; ok {
			out[i] = v
		} else {
			missA, missB, missAt = append(missA, a[i]), append(missB, b[i]), append(missAt, i)
		}
	}
	m.mu.Unlock()
	if len(missAt) == 0 {
		return out, nil
	}
	var got []float64
	if bs, ok := m.inner.(catalog.BatchSimilarity); ok {
		var err error
		if got, err = bs.Similarities(missA, missB); err != nil {
			return nil, err
		}
		if len(got) != len(missAt) {
			return nil, fmt.Errorf("similarity %s returned %d values for %d pairs", m.inner.Name(), len(got), len(missAt))
		}
	} else {
		got = make([]float64, len(missAt))
		for j := range missAt {
			v, err := m.inner.Similarity(missA[j], missB[j])
			if err != nil {
				return nil, err
			}
			got[j] = v
		}
	}
	for j, i := range missAt {
		out[i] = got[j]
		m.put(pairKey(missA[j], missB[j]), got[j])
	}
	return out, nil
}

func (m *memoSimilarity) put(k [32]byte, v float64) {
	m.mu.Lock()
	m.memo[k] = v
	m.mu.Unlock()
}

// recordingSimilarity notes the pairs and values it is asked for, in order: ComputePriors asks
// for one pair per tool, in the tools' order.
type recordingSimilarity struct {
	*memoSimilarity
	keys   [][32]byte
	values []float64
}

func (s *recordingSimilarity) Similarity(a, b string) (float64, error) {
	v, err := s.memoSimilarity.Similarity(a, b)
	s.keys, s.values = append(s.keys, pairKey(a, b)), append(s.values, v)
	return v, err
}

func (s *recordingSimilarity) Similarities(a, b []string) ([]float64, error) {
	v, err := s.memoSimilarity.Similarities(a, b)
	if err != nil {
		return nil, err
	}
	for i := range a {
		s.keys, s.values = append(s.keys, pairKey(a[i], b[i])), append(s.values, v[i])
	}
	return v, nil
}

// sameTool reports whether two tools are the same record as stored: their JSON encodings are
// equal. reflect.DeepEqual told an empty list from a missing one, which the stored record
// (omitempty) cannot, so an unchanged tool read back after a restart was "updated".
func sameTool(a, b catalog.Tool) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return reflect.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

// prepareTools validates tools and turns the new or changed ones into entries (document
// vectors embedded, consistency computed); unchanged tools are skipped. Called under catMu.
func (r *Router) prepareTools(tools []catalog.Tool) ([]*toolRecord, error) {
	view := r.view.Load()
	seen := map[string]bool{}
	var todo []catalog.Tool
	var existing []*entry
	for i := range tools {
		t := tools[i]
		t.Prior = nil // recomputed under the router's prior weights
		if err := validateTool(&t, fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, err
		}
		if seen[t.ID] {
			return nil, inputErr(fmt.Sprintf("tools[%d].id", i), "duplicate id %q", t.ID)
		}
		seen[t.ID] = true
		var old *entry
		if view != nil {
			old = view.byID[t.ID]
		}
		if old != nil && !old.removed && sameTool(old.tool, t) {
			continue
		}
		todo = append(todo, t)
		existing = append(existing, old)
	}
	if len(todo) == 0 {
		return nil, nil
	}
	// Vectors only for tools whose indexed text is new.
	var embed []catalog.Tool
	var embedAt []int
	for i, t := range todo {
		if old := existing[i]; old == nil || old.tool.Name != t.Name || old.tool.Description != t.Description || old.vector == nil {
			embed = append(embed, t)
			embedAt = append(embedAt, i)
		}
	}
	vecs := make([][]float32, len(todo))
	for i, old := range existing {
		if old != nil {
			vecs[i] = old.vector
		}
	}
	if len(embed) > 0 {
		for start := 0; start < len(embed); start += 256 {
			end := min(start+256, len(embed))
			got, err := r.front.DocVectors(embed[start:end])
			if err != nil {
				return nil, err
			}
			for j := range got {
				vecs[embedAt[start+j]] = got[j]
			}
			if r.cfg.Progress != nil {
				r.cfg.Progress(end, len(embed))
			}
		}
	}
	next := 0
	// The provider table is read under mu: a replica's follower changes it (replica.go).
	r.mu.Lock()
	provIndex, nextProv := maps.Clone(r.provIndex), len(r.provKeys)
	r.mu.Unlock()
	newProv := map[string]int{}
	if view != nil {
		next = len(view.entries)
	}
	// The prior's consistency of every new or changed tool, in one batch; the pairs are kept
	// with the tools (the quality part is recomputed over the whole catalog in buildView).
	rec := &recordingSimilarity{memoSimilarity: r.memo}
	priced := append([]catalog.Tool(nil), todo...)
	if err := catalog.ComputePriors(priced, r.cfg.Prior, rec); err != nil {
		return nil, err
	}
	if len(rec.keys) != len(todo) {
		return nil, fmt.Errorf("prior consistency: %d pairs scored for %d tools", len(rec.keys), len(todo))
	}
	recs := make([]*toolRecord, len(todo))
	for i, t := range todo {
		e := &entry{tool: t, vector: vecs[i], pairKey: rec.keys[i], consistency: rec.values[i]}
		if old := existing[i]; old != nil {
			e.index = old.index
		} else {
			e.index = next
			next++
		}
		key := catalog.ProviderKey(&t)
		p, ok := provIndex[key]
		if !ok {
			if p, ok = newProv[key]; !ok {
				p = nextProv
				newProv[key] = p
				nextProv++
			}
		}
		e.provider = p
		recs[i] = &toolRecord{e: e, providerKey: key}
	}
	return recs, nil
}

// ValidateTools checks tools as New and PutTools will (ids, names, platforms and descriptions:
// present where required, valid UTF-8, no control characters, within the limits; ids unique),
// without a router: a catalog file can be checked before the work of a start. Errors are
// *InputError naming the field as "tools[i].field".
func ValidateTools(tools []catalog.Tool) error {
	seen := map[string]bool{}
	for i := range tools {
		if err := validateTool(&tools[i], fmt.Sprintf("tools[%d]", i)); err != nil {
			return err
		}
		if seen[tools[i].ID] {
			return inputErr(fmt.Sprintf("tools[%d].id", i), "duplicate id %q", tools[i].ID)
		}
		seen[tools[i].ID] = true
	}
	return nil
}

// validateTool checks a tool record from a client or a catalog file; key locates it.
func validateTool(t *catalog.Tool, key string) error {
	if err := checkText(key+".id", t.ID, MaxIDBytes); err != nil {
		return err
	}
	// The rules a catalog file's ids pass at start (an id is a file name part and a key).
	if err := catalog.ValidateID(t.ID); err != nil {
		return inputErr(key+".id", "%v", err)
	}
	if err := checkText(key+".name", t.Name, MaxIDBytes); err != nil {
		return err
	}
	if err := checkText(key+".platform", t.Platform, 64); err != nil {
		return err
	}
	if len(t.Description) > 64<<10 {
		return inputErr(key+".description", "is %d bytes, the limit is 65536", len(t.Description))
	}
	if t.Description != "" {
		if err := checkText(key+".description", t.Description, 64<<10); err != nil {
			return err
		}
	}
	if t.Probe != nil && (math.IsNaN(t.Probe.LatencyMS) || math.IsInf(t.Probe.LatencyMS, 0) || t.Probe.LatencyMS < 0) {
		return inputErr(key+".probe.latency_ms", "must be a finite number >= 0")
	}
	return nil
}

// applyTool adds or replaces an entry (under mu, at commit or on replay).
func (r *Router) applyTool(rec *toolRecord, entries []*entry) []*entry {
	e := rec.e
	if _, ok := r.provIndex[rec.providerKey]; !ok {
		r.provIndex[rec.providerKey] = len(r.provKeys)
		r.provKeys = append(r.provKeys, rec.providerKey)
	}
	e.provider = r.provIndex[rec.providerKey]
	for len(entries) <= e.index {
		entries = append(entries, nil)
	}
	entries[e.index] = e
	r.memo.put(e.pairKey, e.consistency)
	for len(r.providers) <= e.index {
		r.providers = append(r.providers, -1)
	}
	r.providers[e.index] = e.provider
	if ps, ok := r.pol.(bandit.ProviderSetter); ok {
		ps.SetProvider(e.index, e.provider)
	}
	return entries
}

// PutTools adds the tools that are new and updates those that changed (unchanged ones are left
// alone), durably, and returns how many were added and updated. Their document vectors are
// embedded before anything is written.
func (r *Router) PutTools(ctx context.Context, tools []catalog.Tool) (added, updated int, err error) {
	if r.closed.Load() {
		return 0, 0, ErrClosed
	}
	r.catMu.Lock()
	defer r.catMu.Unlock()
	for try := 0; ; try++ {
		recs, err := r.prepareTools(tools)
		if err != nil || len(recs) == 0 {
			return 0, 0, err
		}
		view := r.view.Load()
		entries := append([]*entry(nil), view.entries...)
		added, updated = 0, 0
		for _, rec := range recs {
			// A deleted tool put again is added back (201 through the API), not updated.
			if rec.e.index < len(view.entries) && !view.entries[rec.e.index].removed {
				updated++
			} else {
				added++
			}
			// Copy the replaced entries so the published view never changes.
			for len(entries) <= rec.e.index {
				entries = append(entries, nil)
			}
			entries[rec.e.index] = rec.e
		}
		next, err := r.buildView(entries)
		if err != nil {
			return 0, 0, err
		}
		status, err := r.commitCatalog(ctx, recs, nil, next, r.toolClaims(recs, len(view.entries)))
		if err != nil || status == state.Appended {
			return added, updated, err
		}
		// A shared store: another replica took an index or an id first. Catch up, try again.
		if try == 10 {
			return 0, 0, fmt.Errorf("catalog: other replicas kept taking the new tools' indices (%d tries)", try+1)
		}
		if err := r.Sync(ctx); err != nil {
			return 0, 0, err
		}
	}
}

// commitCatalog writes the tool records (or a deletion) durably, then applies them and
// publishes next; on a shared store, under claims, onto the catalog as the log has it then.
func (r *Router) commitCatalog(ctx context.Context, recs []*toolRecord, deleted *entry, next *catalogView, claims []state.Claim) (state.ClaimStatus, error) {
	var raw [][]byte
	for _, rec := range recs {
		b, err := rec.encode()
		if err != nil {
			return 0, err
		}
		raw = append(raw, b)
	}
	if deleted != nil {
		raw = append(raw, encodeDelete(deleted.tool.ID))
	}
	apply := func() {
		entries := next.entries
		for _, rec := range recs {
			entries = r.applyTool(rec, entries)
		}
		r.view.Store(next)
	}
	if r.shared != nil {
		// Other replicas' records may have changed the catalog since next was built: apply ours
		// where the log has them, exactly as the other replicas replay them (replica.go).
		apply = func() {
			entries := r.commits.work()
			for _, b := range raw {
				_ = r.replay(b, &entries, r.front.Dim()) // records just encoded: they decode
			}
			r.commits.entries = entries
		}
	}
	return r.commits.submitClaimed(ctx, apply, nil, claims, raw...)
}

// DeleteTool removes a tool from the catalog: it is no longer retrieved, pending decisions can
// still report it, and its id keeps its learned state should it be put again.
func (r *Router) DeleteTool(ctx context.Context, id string) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if err := checkText("id", id, MaxIDBytes); err != nil {
		return err
	}
	r.catMu.Lock()
	defer r.catMu.Unlock()
	view := r.view.Load()
	old := view.byID[id]
	if old == nil || old.removed {
		return fmt.Errorf("%w: %s", ErrUnknownTool, id)
	}
	gone := *old
	gone.removed = true
	entries := append([]*entry(nil), view.entries...)
	entries[gone.index] = &gone
	next, err := r.buildView(entries)
	if err != nil {
		return err
	}
	_, err = r.commitCatalog(ctx, nil, &gone, next, nil)
	return err
}

// Tool returns a live tool with its current prior.
func (r *Router) Tool(id string) (catalog.Tool, bool) {
	view := r.view.Load()
	e := view.byID[id]
	if e == nil || e.removed {
		return catalog.Tool{}, false
	}
	return r.withPrior(view, e), true
}

// Tools returns the live tools, in the order they were first added.
func (r *Router) Tools() []catalog.Tool {
	view := r.view.Load()
	out := make([]catalog.Tool, len(view.live))
	for i, e := range view.live {
		out[i] = r.withPrior(view, e)
	}
	return out
}

func (r *Router) withPrior(view *catalogView, e *entry) catalog.Tool {
	t := e.tool
	if p := view.parts[e.index]; p != nil {
		cp := *p
		t.Prior = &cp
	}
	return t
}

// reconcile puts the configured tools, and removes stored ones absent from them when prune.
func (r *Router) reconcile(ctx context.Context, tools []catalog.Tool, prune bool) error {
	if _, _, err := r.PutTools(ctx, tools); err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return fmt.Errorf("catalog: %w", err)
		}
		return err
	}
	if !prune {
		return nil
	}
	keep := map[string]bool{}
	for _, t := range tools {
		keep[t.ID] = true
	}
	for _, e := range r.view.Load().live {
		if !keep[e.tool.ID] {
			if err := r.DeleteTool(ctx, e.tool.ID); err != nil {
				return err
			}
		}
	}
	return nil
}
