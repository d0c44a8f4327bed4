package evaloffline

import (
	"math"
	"strings"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// TestDenseRetrieverFromRegistry evaluates an installed encoder next to BM25 on the embedded
// default benchmark and recomputes both rows from the written files with pytrec_eval.
func TestDenseRetrieverFromRegistry(t *testing.T) {
	python := testassets.Python(t)
	lib := testassets.ORTLibrary(t)
	model := testassets.Model(t, "all-minilm-l6-v2")
	h := testassets.Home(t)
	b, err := defaultbench.Load()
	if err != nil {
		t.Fatal(err)
	}
	reg := NewLexicalRegistry()
	if err := RegisterDense(reg); err != nil {
		t.Fatal(err)
	}
	if err := RegisterRATED(reg); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Retrievers = []string{"bm25", "dense:all-minilm-l6-v2", "rated-nofb:all-minilm-l6-v2"}
	cfg.Rounds = 500
	opts := encode.Options{Runtime: encode.NewRuntime(lib)}
	models := encode.NewModels(opts)
	defer models.Close()
	src := retrieve.EncoderSource{ModelsDir: h.ModelsDir(), Options: opts, Missing: h.Missing, Models: models}
	res, err := Run(Env{Bench: b, Encoders: src}, "default", reg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Systems[1].Label; got != "dense:all-minilm-l6-v2" {
		t.Errorf("label %q", got)
	}
	// dense: and rated-nofb: over the same folder share one opened model (encode.Models).
	if models.Len() != 1 {
		t.Errorf("%d models opened for one folder, want 1", models.Len())
	}
	out := t.TempDir()
	if err := WriteOutputs(out, res); err != nil {
		t.Fatal(err)
	}
	run := RunFileName("dense:all-minilm-l6-v2")
	rated := RunFileName("rated-nofb:all-minilm-l6-v2")
	ref := checkOutputs(t, python, out, "bm25", strings.TrimSuffix(run, ".trec"), strings.TrimSuffix(rated, ".trec"))
	for _, sys := range res.Systems {
		r := ref[strings.TrimSuffix(RunFileName(sys.Name), ".trec")]
		for mi, m := range cfg.Measures {
			if math.Abs(sys.Mean[res.Measures[mi]]-r.Mean[m.TrecEvalName()]) > 1e-6 {
				t.Errorf("%s %s = %v, pytrec_eval %v", sys.Name, res.Measures[mi], sys.Mean[res.Measures[mi]], r.Mean[m.TrecEvalName()])
			}
		}
		t.Logf("%s: MRR %.3f Hit@1 %.3f Hit@5 %.3f", sys.Label, sys.Mean["MRR"], sys.Mean["Hit@1"], sys.Mean["Hit@5"])
	}
	// The system records the encoder it ran: the digests in rated.yaml were written by the set-up
	// step with sha256sum, independently of rated.
	mc, err := encode.LoadConfig(model)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Systems[1].Encoder; e == nil || len(e.ModelSHA256) != 1 || e.ModelSHA256[0] != mc.Source.ModelSHA256 || e.TokenizerSHA256 != mc.Source.TokenizerSHA256 {
		t.Errorf("recorded encoder %+v, rated.yaml says model %s tokenizer %s", res.Systems[1].Encoder, mc.Source.ModelSHA256, mc.Source.TokenizerSHA256)
	}
	if res.Systems[0].Encoder != nil {
		t.Errorf("BM25 recorded an encoder: %+v", res.Systems[0].Encoder)
	}
	if _, err := Run(Env{Bench: b, Encoders: src}, "default", reg, Config{Split: "test", Retrievers: []string{"dense:no-such-model"}, Depth: 10, Measures: cfg.Measures}); err == nil ||
		!strings.Contains(err.Error(), "rated setup models") || !strings.Contains(err.Error(), h.Dir) {
		t.Errorf("a missing model must name the home and the set-up part: %v", err)
	}
}
