package retrieve

import (
	"errors"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/provenance"
)

func modelsDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, encode.ConfigFile), []byte("model: model.onnx\ntokenizer: tokenizer.json\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var errMissing = errors.New("missing")

func testSource(models string) EncoderSource {
	return EncoderSource{ModelsDir: models, Missing: func(what, path, part string) error {
		return errors.Join(errMissing, errors.New(what+" at "+path+": rated setup "+part))
	}}
}

func TestFindModel(t *testing.T) {
	models := modelsDir(t, "zz-custom", "all-minilm-l6-v2", "bge-small-en-v1.5")
	if err := os.Mkdir(filepath.Join(models, "no-yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := testSource(models)
	for spec, want := range map[string]string{
		"":                                 filepath.Join(models, "bge-small-en-v1.5"), // preferred over all-minilm-l6-v2 and others
		"auto":                             filepath.Join(models, "bge-small-en-v1.5"),
		"zz-custom":                        filepath.Join(models, "zz-custom"),
		" all-minilm-l6-v2 ":               filepath.Join(models, "all-minilm-l6-v2"),
		filepath.Join(models, "zz-custom"): filepath.Join(models, "zz-custom"),
	} {
		got, err := s.FindModel(spec)
		if err != nil || got != want {
			t.Errorf("FindModel(%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	// Without a preferred one, the first by name; folders without rated.yaml do not count.
	s = testSource(modelsDir(t, "zeta", "alpha"))
	if got, _ := s.FindModel(""); filepath.Base(got) != "alpha" {
		t.Errorf("got %q, want alpha", got)
	}
	for spec, want := range map[string]string{"no-yaml": "encoder model folder no-yaml", "nope": "rated setup models", "./no/such/dir": "no such model folder"} {
		_, err := testSource(models).FindModel(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("FindModel(%q): %v, want %q", spec, err, want)
		}
	}
	if _, err := testSource(filepath.Join(models, "absent")).FindModel(""); !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "rated setup models") {
		t.Errorf("empty home: %v", err)
	}
	if _, err := s.FindModel("openai:http://127.0.0.1:1/v1"); err == nil {
		t.Error("an endpoint is not a model folder")
	}
}

// A model folder without the ONNX Runtime library installed is a Missing error for the
// onnxruntime part, before anything is loaded.
func TestOpenWithoutLibrary(t *testing.T) {
	s := testSource(modelsDir(t, "m"))
	s.Options.Runtime = encode.NewRuntime(filepath.Join(t.TempDir(), "libonnxruntime.so"))
	_, err := s.Open("m")
	if !errors.Is(err, errMissing) || !strings.Contains(err.Error(), "ONNX Runtime library") || !strings.Contains(err.Error(), "rated setup onnxruntime") {
		t.Errorf("got %v", err)
	}
}

func TestParseEndpointSpec(t *testing.T) {
	good := map[string]EndpointConfig{
		"openai:http://127.0.0.1:8080/v1":               {BaseURL: "http://127.0.0.1:8080/v1", Model: "default"},
		"openai:https://api.example.com/v1/#text-emb-3": {BaseURL: "https://api.example.com/v1", Model: "text-emb-3"},
	}
	for spec, want := range good {
		got, err := ParseEndpointSpec(spec)
		if err != nil || got.BaseURL != want.BaseURL || got.Model != want.Model {
			t.Errorf("%s: got %+v, %v", spec, got, err)
		}
	}
	for _, spec := range []string{"openai:", "openai:127.0.0.1:8080", "openai:ftp://h/v1", "openai:http:///v1", "openai:http://h/v1?model=x"} {
		if _, err := ParseEndpointSpec(spec); err == nil {
			t.Errorf("%s accepted", spec)
		}
	}
}

// openai:URL#MODEL opens the OpenAI-compatible endpoint (a server on 127.0.0.1): vectors come back
// normalised, the bearer token is sent, and the identity names the URL and model.
func TestOpenEndpoint(t *testing.T) {
	fake := &fakeEmbeddingsServer{table: map[string][]float64{"a": {3, 4}, "b": {0, 2}}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	s := EncoderSource{Client: srv.Client(), APIKey: "k"}
	enc, err := s.Open("openai:" + srv.URL + "/v1#ada-test")
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	vecs, err := enc.EncodeDocs([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(vecs[0][0])-0.6) > 1e-7 || math.Abs(float64(vecs[0][1])-0.8) > 1e-7 || vecs[1][1] != 1 {
		t.Errorf("vectors %v, want [0.6 0.8] [0 1]", vecs)
	}
	if fake.auth[0] != "Bearer k" {
		t.Errorf("authorization %q", fake.auth[0])
	}
	id := provenance.EncoderOf(enc)
	if id == nil || id.URL != srv.URL+"/v1/embeddings" || id.Name != "endpoint:ada-test" || enc.Dir != "" {
		t.Errorf("identity %+v", id)
	}
	if _, err := (EncoderSource{}).Open("openai:" + srv.URL + "/v1#ada-test"); err == nil {
		t.Error("opened an endpoint without an HTTP client")
	}
}
