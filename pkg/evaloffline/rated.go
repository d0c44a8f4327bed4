package evaloffline

import (
	"fmt"
	"sort"

	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/provenance"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// RATEDOffline is RATED's ranking before any execution feedback: the dense top-K reordered by
// the fused score. RATED ranks only those K tools (the bandit never sees the rest), so a search
// returns at most K candidates, each with its real fused score. Offline there is no feedback, so the variants differ
// only through the prior: at cold start S_bandit of RATED (Full) and of RATED (w/ Global MAB) is
// the tool's prior plus an exploration bonus that is the same for every tool, giving
// w₁·S_sem + (w₂+w₃)·r_static; RATED (w/o Feedback) is w₁·S_sem + w₃·r_static.
type RATEDOffline struct {
	dense       retrieve.Retriever
	name        string
	k           int
	semWeight   float64
	priorWeight float64
	priors      map[string]float64
}

// Name implements retrieve.Retriever.
func (r *RATEDOffline) Name() string { return r.name }

// Search implements retrieve.Retriever.
func (r *RATEDOffline) Search(query string, k int) ([]retrieve.Candidate, error) {
	cands, err := r.dense.Search(query, max(k, r.k))
	if err != nil {
		return nil, err
	}
	return r.rerank(cands, k), nil
}

// SearchBatch ranks many queries with one batched dense search (queries embedded in one
// encoder call, one blocked pass over the corpus) when the dense retriever has one.
func (r *RATEDOffline) SearchBatch(queries []string, k int) ([][]retrieve.Candidate, error) {
	all, err := searchAll(r.dense, queries, max(k, r.k))
	if err != nil {
		return nil, err
	}
	for i := range all {
		all[i] = r.rerank(all[i], k)
	}
	return all, nil
}

// rerank reorders the top r.k of a dense ranking by the fused score and returns the first k of
// them (at most r.k: RATED gives no score to a tool outside its top-K).
func (r *RATEDOffline) rerank(cands []retrieve.Candidate, k int) []retrieve.Candidate {
	head := cands[:min(r.k, len(cands))]
	for i := range head {
		c := &head[i]
		c.Score = r.semWeight*c.Score + r.priorWeight*r.priors[c.ID]
	}
	sort.SliceStable(head, func(i, j int) bool { return head[i].Score > head[j].Score })
	return head[:min(k, len(head))]
}

// RegisterRATED adds the families "rated-full:MODEL" (also standing for w/ Global MAB offline),
// "rated-nofb:MODEL" and "rated-wo-contrastive:MODEL": RATEDOffline over the dense retriever of MODEL, with the paper's top-K
// (10), fusion weights (0.75/0.15/0.10) and prior weights (0.5/0.3/0.2, name–description
// consistency under the same encoder).
func RegisterRATED(reg *Registry) error {
	w := bandit.FusionWeights{Semantic: 0.75, Bandit: 0.15, Prior: 0.10}
	variants := []struct {
		family, label, help string
		prior               float64
	}{
		{"rated-full:", "RATED (Full; = w/ Global MAB offline)", "RATED at cold start over a dense model: w1·S_sem + (w2+w3)·prior on the top-10", w.Bandit + w.Prior},
		{"rated-nofb:", "RATED (w/o Feedback)", "RATED without feedback over a dense model: w1·S_sem + w3·prior on the top-10", w.Prior},
		// The paper's "w/o Contrastive" is RATED (Full) over the encoder before fine-tuning: the
		// same computation, labelled for Table 1 when MODEL is the source of a fine-tuned folder.
		{"rated-wo-contrastive:", "RATED (w/o Contrastive)", "RATED (Full) over the encoder before fine-tuning (name the source model of a rated finetune run)", w.Bandit + w.Prior},
	}
	for _, v := range variants {
		v := v
		err := reg.Register(v.family, v.help, func(env Env, arg string) (retrieve.Retriever, error) {
			d, model, err := openDense(env, arg)
			if err != nil {
				return nil, err
			}
			tools := env.Bench.CorpusTools()
			if err := catalog.ComputePriors(tools, catalog.PaperPriorConfig(), retrieve.EncoderSimilarity{Encoder: model}); err != nil {
				model.Close()
				return nil, fmt.Errorf("%s%s: prior: %w", v.family, arg, err)
			}
			priors := make(map[string]float64, len(tools))
			for _, t := range tools {
				priors[t.ID] = t.Prior.Value
			}
			r := &RATEDOffline{dense: d, name: fmt.Sprintf("%s %s", v.label, arg), k: 10,
				semWeight: w.Semantic, priorWeight: v.prior, priors: priors}
			return closingRATED{r, model}, nil
		})
		if err != nil {
			return err
		}
		if err := reg.SetCheck(v.family, checkEncoder); err != nil {
			return err
		}
	}
	return nil
}

// EncoderIdentity is the identity of the encoder behind the dense first stage.
func (r *RATEDOffline) EncoderIdentity() provenance.Encoder {
	if e := provenance.EncoderOf(r.dense); e != nil {
		return *e
	}
	return provenance.Encoder{Name: r.dense.Name()}
}

// closingRATED closes the encoder behind a RATEDOffline after its evaluation.
type closingRATED struct {
	*RATEDOffline
	model *retrieve.OpenedEncoder
}

// Close releases the encoder's ONNX Runtime sessions.
func (c closingRATED) Close() error { return c.model.Close() }
