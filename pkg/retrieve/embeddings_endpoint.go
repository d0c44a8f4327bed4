package retrieve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/rated-dev/rated/internal/httpretry"
	"github.com/rated-dev/rated/pkg/encode"
)

// EndpointConfig configures an OpenAI-compatible embeddings endpoint (POST {BaseURL}/embeddings
// with {"model", "input": [...]}, answering {"data": [{"index", "embedding"}]}), such as OpenAI's
// text-embedding-ada-002 (the paper's Ada-002 row), a vLLM, Ollama or text-embeddings-inference
// server.
type EndpointConfig struct {
	// BaseURL ends before /embeddings, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:8080/v1".
	BaseURL string
	// Model is sent as "model" and names the encoder ("endpoint:<Model>").
	Model string
	// APIKey, when set, is sent as "Authorization: Bearer <APIKey>".
	APIKey string
	// Dim is the expected embedding size; 0 takes the size of the first response.
	Dim int
	// BatchSize bounds the texts per request (default 64).
	BatchSize int
	// QueryPrefix and DocPrefix are prepended to queries and documents.
	QueryPrefix, DocPrefix string
	// Retries is how many times a request failing with 429 or 5xx, or a transport error, is
	// retried (default 0), after Backoff, doubled each time up to 16× (default 500ms), or after
	// the server's Retry-After when that is longer (internal/httpretry).
	Retries int
	Backoff time.Duration
	// Sleep waits between retries (nil: httpretry.Sleep; tests inject a recorder).
	Sleep func(ctx context.Context, d time.Duration) error
	// Client sends the requests (required: it carries the timeout).
	Client *http.Client
}

// EmbeddingsEndpoint is an encode.Encoder backed by an OpenAI-compatible /v1/embeddings
// endpoint; NewDense over it gives the dense retriever of an API-hosted encoder. Vectors are
// L2-normalised. It is safe for concurrent use.
type EmbeddingsEndpoint struct {
	cfg EndpointConfig
	url string

	mu  sync.Mutex
	dim int
}

var _ encode.Encoder = (*EmbeddingsEndpoint)(nil)

// NewEmbeddingsEndpoint checks the configuration; no request is sent until the first encoding.
func NewEmbeddingsEndpoint(cfg EndpointConfig) (*EmbeddingsEndpoint, error) {
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("embeddings endpoint: base URL and model are required")
	}
	if cfg.Client == nil {
		return nil, errors.New("embeddings endpoint: an HTTP client is required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	return &EmbeddingsEndpoint{cfg: cfg, url: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings", dim: cfg.Dim}, nil
}

// Name is "endpoint:" and the model name.
func (e *EmbeddingsEndpoint) Name() string { return "endpoint:" + e.cfg.Model }

// Dim is the configured size, or the size of the first response (0 before it).
func (e *EmbeddingsEndpoint) Dim() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.dim
}

// EncodeQueries embeds queries (query prefix applied).
func (e *EmbeddingsEndpoint) EncodeQueries(texts []string) ([][]float32, error) {
	return e.encode(e.cfg.QueryPrefix, texts)
}

// EncodeDocs embeds documents (doc prefix applied).
func (e *EmbeddingsEndpoint) EncodeDocs(texts []string) ([][]float32, error) {
	return e.encode(e.cfg.DocPrefix, texts)
}

func (e *EmbeddingsEndpoint) encode(prefix string, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += e.cfg.BatchSize {
		batch := texts[start:min(start+e.cfg.BatchSize, len(texts))]
		input := make([]string, len(batch))
		for i, s := range batch {
			input[i] = prefix + s
		}
		vecs, err := e.request(input)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// request sends one batch, retrying transient failures, and returns normalised vectors in input
// order.
func (e *EmbeddingsEndpoint) request(input []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: e.cfg.Model, Input: input, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	var vecs [][]float32
	policy := httpretry.Policy{Retries: e.cfg.Retries, Backoff: e.cfg.Backoff}
	policy.Do(context.Background(), e.cfg.Sleep, func(int) httpretry.Verdict {
		var v httpretry.Verdict
		vecs, v, err = e.send(body, len(input))
		return v
	})
	if err != nil {
		return nil, err
	}
	return vecs, nil
}

// send performs one HTTP exchange; the verdict says whether the failure is transient, and after
// how long the server asked to be called again.
func (e *EmbeddingsEndpoint) send(body []byte, n int) (vecs [][]float32, verdict httpretry.Verdict, err error) {
	req, err := http.NewRequest(http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return nil, httpretry.Verdict{}, fmt.Errorf("embeddings endpoint %s: %w", e.url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.cfg.Client.Do(req)
	if err != nil {
		return nil, httpretry.Verdict{Retry: true}, fmt.Errorf("embeddings endpoint %s: %w", e.url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, httpretry.Verdict{Retry: true}, fmt.Errorf("embeddings endpoint %s: reading response: %w", e.url, err)
	}
	var parsed embeddingsResponse
	jsonErr := json.Unmarshal(raw, &parsed)
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(raw))
		if jsonErr == nil && parsed.Error != nil && parsed.Error.Message != "" {
			msg = parsed.Error.Message
		}
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		transient := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		verdict = httpretry.Verdict{Retry: transient, RetryAfter: httpretry.FromResponse(resp, time.Now())}
		return nil, verdict, fmt.Errorf("embeddings endpoint %s: HTTP %d: %s", e.url, resp.StatusCode, msg)
	}
	if jsonErr != nil {
		return nil, httpretry.Verdict{}, fmt.Errorf("embeddings endpoint %s: malformed response: %w", e.url, jsonErr)
	}
	if len(parsed.Data) != n {
		return nil, httpretry.Verdict{}, fmt.Errorf("embeddings endpoint %s: %d embeddings for %d inputs", e.url, len(parsed.Data), n)
	}
	vecs = make([][]float32, n)
	for _, d := range parsed.Data {
		if d.Index < 0 || d.Index >= n || vecs[d.Index] != nil {
			return nil, httpretry.Verdict{}, fmt.Errorf("embeddings endpoint %s: bad or repeated index %d", e.url, d.Index)
		}
		if err := e.checkDim(len(d.Embedding)); err != nil {
			return nil, httpretry.Verdict{}, err
		}
		v, err := normalized(d.Embedding)
		if err != nil {
			return nil, httpretry.Verdict{}, fmt.Errorf("embeddings endpoint %s: input %d: %w", e.url, d.Index, err)
		}
		vecs[d.Index] = v
	}
	return vecs, httpretry.Verdict{}, nil
}

func (e *EmbeddingsEndpoint) checkDim(d int) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d == 0 {
		return fmt.Errorf("embeddings endpoint %s: empty embedding", e.url)
	}
	if e.dim == 0 {
		e.dim = d
	}
	if d != e.dim {
		return fmt.Errorf("embeddings endpoint %s: embedding of dimension %d, want %d", e.url, d, e.dim)
	}
	return nil
}

// normalized returns v scaled to unit length as float32; zero or non-finite vectors are errors.
func normalized(v []float64) ([]float32, error) {
	var s float64
	for _, x := range v {
		s += x * x
	}
	n := math.Sqrt(s)
	if n == 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return nil, fmt.Errorf("embedding has norm %v", n)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out, nil
}
