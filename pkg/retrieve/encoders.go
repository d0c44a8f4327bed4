package retrieve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/rated-dev/rated/pkg/encode"
	"github.com/rated-dev/rated/pkg/provenance"
)

// EndpointPrefix starts an encoder spec naming an OpenAI-compatible embeddings endpoint:
// "openai:URL" or "openai:URL#MODEL", URL ending before /embeddings (http://127.0.0.1:8080/v1).
const EndpointPrefix = "openai:"

// PreferredEncoders are tried in this order when no encoder is named; other installed model
// folders follow by name.
var PreferredEncoders = []string{"dragon-plus", "bge-small-en-v1.5", "all-minilm-l6-v2"}

// EncoderSource opens the encoder a command was asked for. One spec syntax serves every command
// that encodes:
//
//	"" or "auto"        the first installed model folder under ModelsDir (PreferredEncoders first)
//	NAME                the model folder ModelsDir/NAME
//	PATH                a model folder (a path with a separator, or an existing folder)
//	openai:URL[#MODEL]  an OpenAI-compatible embeddings endpoint; MODEL is sent as "model"
//	                    (default "default", which a server serving one model ignores)
//
// A model folder or ONNX Runtime library that is not installed is an error built by Missing,
// which names the asset home and the `rated setup` part that installs it: there is no silent
// fallback to another retriever.
type EncoderSource struct {
	// ModelsDir holds the installed model folders (<home>/models).
	ModelsDir string
	// Options open ONNX model folders; Options.Runtime (the ONNX Runtime library) is required
	// for them.
	Options encode.Options
	// Client sends endpoint requests (it carries the timeout); APIKey, when set, is sent as a
	// bearer token (e.g. $OPENAI_API_KEY).
	Client *http.Client
	APIKey string
	// Missing builds the error for an asset that is not installed: what, where it was looked
	// for, and the `rated setup` part that installs it. nil gives a plain error.
	Missing func(what, path, part string) error
	// Models, when set, opens each model folder once and shares it between every Open of the
	// same folder (its own options apply, not Options); the OpenedEncoders it returns are not
	// closed one by one: whoever made Models closes it.
	Models *encode.Models
}

// OpenedEncoder is an encoder opened from a spec, with where it came from.
type OpenedEncoder struct {
	encode.Encoder
	// Dir is the model folder ("" for an endpoint).
	Dir   string
	close func() error
}

// Close releases the encoder (ONNX Runtime sessions; nothing for an endpoint).
func (o *OpenedEncoder) Close() error {
	if o == nil || o.close == nil {
		return nil
	}
	return o.close()
}

// EncodeDocsProgress embeds a corpus in one call reporting progress per batch when the encoder
// can (encode.ProgressEncoder, which also stops between batches once ctx ends), else in one call
// reporting once at the end.
func (o *OpenedEncoder) EncodeDocsProgress(ctx context.Context, texts []string, progress func(done, total int)) ([][]float32, error) {
	if pe, ok := o.Encoder.(encode.ProgressEncoder); ok {
		return pe.EncodeDocsProgress(ctx, texts, progress)
	}
	v, err := o.EncodeDocs(texts)
	if err == nil && progress != nil {
		progress(len(texts), len(texts))
	}
	return v, err
}

// Uncached returns the same encoder without the embedding cache when it is a model folder (its
// embeddings are then neither read from nor written to disk: the right choice for vectors as
// large as a SPLADE vocabulary), else o itself. Closing the result closes nothing.
func (o *OpenedEncoder) Uncached() *OpenedEncoder {
	if u, ok := o.Encoder.(interface{ Uncached() encode.Encoder }); ok {
		return &OpenedEncoder{Encoder: u.Uncached(), Dir: o.Dir}
	}
	return o
}

// EncoderIdentity forwards the encoder's identity for the outputs' provenance.
func (o *OpenedEncoder) EncoderIdentity() provenance.Encoder {
	if e := provenance.EncoderOf(o.Encoder); e != nil {
		return *e
	}
	return provenance.Encoder{Name: o.Name(), Dir: o.Dir}
}

func (s EncoderSource) missing(what, path, part string) error {
	if s.Missing != nil {
		return s.Missing(what, path, part)
	}
	return fmt.Errorf("%s not found at %s: install it with `rated setup %s`", what, path, part)
}

// IsEndpoint reports whether spec names an embeddings endpoint.
func IsEndpoint(spec string) bool { return strings.HasPrefix(spec, EndpointPrefix) }

// FindModel returns the model folder spec names (see EncoderSource); it fails, naming what is
// missing, when none is installed. Endpoint specs are an error here.
func (s EncoderSource) FindModel(spec string) (string, error) {
	spec = strings.TrimSpace(spec)
	if IsEndpoint(spec) {
		return "", fmt.Errorf("encoder %q is an embeddings endpoint, not a model folder", spec)
	}
	if spec == "" || spec == "auto" {
		entries, err := os.ReadDir(s.ModelsDir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("model folders %s: %w", s.ModelsDir, err)
		}
		var names []string
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(s.ModelsDir, e.Name(), encode.ConfigFile)); err == nil {
				names = append(names, e.Name())
			}
		}
		sort.SliceStable(names, func(i, j int) bool { return preference(names[i]) < preference(names[j]) })
		if len(names) == 0 {
			return "", s.missing("encoder model folder (with "+encode.ConfigFile+")", s.ModelsDir, "models")
		}
		return filepath.Join(s.ModelsDir, names[0]), nil
	}
	if st, err := os.Stat(spec); err == nil && st.IsDir() {
		return spec, nil
	}
	if strings.ContainsAny(spec, `/\`) {
		return "", fmt.Errorf("encoder %q: no such model folder", spec)
	}
	dir := filepath.Join(s.ModelsDir, spec)
	if _, err := os.Stat(filepath.Join(dir, encode.ConfigFile)); err != nil {
		return "", s.missing("encoder model folder "+spec, dir, "models")
	}
	return dir, nil
}

func preference(name string) int {
	for i, p := range PreferredEncoders {
		if p == name {
			return i
		}
	}
	return len(PreferredEncoders)
}

// Open opens the encoder spec names (see EncoderSource). The caller closes it.
func (s EncoderSource) Open(spec string) (*OpenedEncoder, error) {
	spec = strings.TrimSpace(spec)
	if IsEndpoint(spec) {
		cfg, err := ParseEndpointSpec(spec)
		if err != nil {
			return nil, err
		}
		// A long catalog must not fail on one 429 or 503: transient failures are retried.
		cfg.APIKey, cfg.Client, cfg.Retries = s.APIKey, s.Client, 3
		if cfg.Client == nil {
			return nil, fmt.Errorf("encoder %s: no HTTP client", spec)
		}
		e, err := NewEmbeddingsEndpoint(cfg)
		if err != nil {
			return nil, fmt.Errorf("encoder %s: %w", spec, err)
		}
		return &OpenedEncoder{Encoder: e}, nil
	}
	dir, err := s.FindModel(spec)
	if err != nil {
		return nil, err
	}
	rt := s.Options.Runtime
	if rt == nil {
		return nil, errors.New("encoder: no ONNX Runtime given")
	}
	if _, err := os.Stat(rt.LibraryPath()); err != nil {
		return nil, s.missing("ONNX Runtime library", rt.LibraryPath(), "onnxruntime")
	}
	if s.Models != nil {
		m, err := s.Models.Open(dir)
		if err != nil {
			return nil, err
		}
		return &OpenedEncoder{Encoder: m, Dir: dir}, nil
	}
	m, err := encode.Open(dir, s.Options)
	if err != nil {
		return nil, err
	}
	return &OpenedEncoder{Encoder: m, Dir: dir, close: m.Close}, nil
}

// ParseEndpointSpec reads "openai:URL[#MODEL]" into an endpoint configuration (without client
// or key). The URL must be http or https with a host; MODEL defaults to "default".
func ParseEndpointSpec(spec string) (EndpointConfig, error) {
	raw := strings.TrimPrefix(spec, EndpointPrefix)
	base, model, _ := strings.Cut(raw, "#")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return EndpointConfig{}, fmt.Errorf("encoder %q: want openai:http(s)://HOST[:PORT]/PATH[#MODEL], e.g. openai:http://127.0.0.1:8080/v1#bge-small-en-v1.5", spec)
	}
	if u.RawQuery != "" {
		return EndpointConfig{}, fmt.Errorf("encoder %q: no query string allowed; name the model after #", spec)
	}
	if model == "" {
		model = "default"
	}
	return EndpointConfig{BaseURL: strings.TrimRight(base, "/"), Model: model}, nil
}
