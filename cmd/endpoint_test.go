package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rated-dev/rated/internal/testassets"
	"github.com/rated-dev/rated/pkg/retrieve"
)

// hashedEmbeddings is an OpenAI-compatible /v1/embeddings server on 127.0.0.1 whose vectors are
// hashed bags of words (plus a constant component, so no text gives a zero vector).
func hashedEmbeddings(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	hv, err := retrieve.NewHashedBagOfWords(64)
	if err != nil {
		t.Fatal(err)
	}
	var texts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "hashed" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		var data []item
		for i, s := range req.Input {
			v, _ := hv.QueryVector(s)
			data = append(data, item{i, append(v, 0.1)})
		}
		texts.Add(int64(len(req.Input)))
		json.NewEncoder(w).Encode(map[string]any{"data": data})
	}))
	t.Cleanup(srv.Close)
	return srv, &texts
}

// --encoder openai:URL#MODEL (dense:openai:… in eval offline and build-bench) runs every command
// that encodes through the OpenAI-compatible endpoint, with an empty asset home (no ONNX model
// needed), and the outputs record the endpoint as the encoder.
func TestOpenAIEncoderInEveryCommand(t *testing.T) {
	t.Setenv("RATED_HOME", t.TempDir())
	srv, texts := hashedEmbeddings(t)
	spec := "openai:" + srv.URL + "/v1#hashed"
	out := t.TempDir()
	bench := writeBench(t, goodBenchFiles())
	type prov struct {
		Provenance struct {
			Encoder struct{ Name, URL string } `json:"encoder"`
		} `json:"provenance"`
	}
	checkURL := func(file string, p prov) {
		t.Helper()
		if p.Provenance.Encoder.URL != srv.URL+"/v1/embeddings" || p.Provenance.Encoder.Name != "endpoint:hashed" {
			t.Errorf("%s records encoder %+v", file, p.Provenance.Encoder)
		}
	}

	before := texts.Load()
	if _, stderr, err := runRated("eval", "dynamic", "--encoder", spec, "--steps", "500", "--seeds", "1", "--out", filepath.Join(out, "t2")); err != nil {
		t.Fatalf("eval dynamic: %v\n%s", err, stderr)
	}
	var t2 prov
	testassets.ReadJSON(t, filepath.Join(out, "t2", "table2.json"), &t2)
	checkURL("table2.json", t2)
	if cfg, _ := os.ReadFile(filepath.Join(out, "t2", "config.yaml")); !strings.Contains(string(cfg), "#         url: "+srv.URL+"/v1/embeddings") {
		t.Errorf("config.yaml does not record the endpoint:\n%s", cfg)
	}

	if _, stderr, err := runRated("eval", "offline", "--bench", bench, "--retrievers", "bm25,dense:"+spec, "--rounds", "50", "--out", filepath.Join(out, "t1")); err != nil {
		t.Fatalf("eval offline: %v\n%s", err, stderr)
	}
	var t1 struct {
		Systems []struct {
			Encoder *struct{ URL string } `json:"encoder"`
		} `json:"systems"`
	}
	testassets.ReadJSON(t, filepath.Join(out, "t1", "table1.json"), &t1)
	if len(t1.Systems) != 2 || t1.Systems[0].Encoder != nil || t1.Systems[1].Encoder == nil || t1.Systems[1].Encoder.URL != srv.URL+"/v1/embeddings" {
		t.Errorf("table1.json systems %+v", t1.Systems)
	}

	if _, stderr, err := runRated("eval", "latency", "--bench", bench, "--encoder", spec, "--queries", "5", "--warmup", "1", "--no-sweep", "--out", filepath.Join(out, "t3")); err != nil {
		t.Fatalf("eval latency: %v\n%s", err, stderr)
	}
	var t3 prov
	testassets.ReadJSON(t, filepath.Join(out, "t3", "table3.json"), &t3)
	checkURL("table3.json", t3)

	if _, stderr, err := runRated("build-bench", "--retriever", "dense:"+spec, "--retrieval-only", "--real-limit", "3", "--tools", "20", "--out", filepath.Join(out, "bb")); err != nil {
		t.Fatalf("build-bench: %v\n%s", err, stderr)
	}
	var bb map[string]any
	testassets.ReadJSON(t, filepath.Join(out, "bb", "retrieval.json"), &bb)
	if r, _ := bb["report"].(map[string]any); r == nil || r["retriever"] != "dense:endpoint:hashed" {
		t.Errorf("retrieval.json %v", bb)
	}
	if texts.Load() == before {
		t.Error("the endpoint embedded nothing")
	}
}
