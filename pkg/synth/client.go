// Package synth builds the EcoAgent benchmarks of the RATED paper with a real LLM: EcoAgent-Syn
// (an LLM writes the queries a user would type for each catalog tool) and EcoAgent-Real (real
// ToolBench queries matched to catalog tools by a retriever and checked by an LLM validator). It
// talks to any OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp's server, vLLM),
// journals every finished request so a killed run resumes where it stopped, and writes the
// benchmark in the BEIR layout with negatives, statistics and a datasheet.
package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/rated-dev/rated/internal/httpretry"
)

// Message is one chat turn.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is one chat-completion request.
type Request struct {
	Messages []Message
	// Seed is the request's base seed; attempt i uses Seed+i so that a retry does not repeat a
	// deterministic bad answer.
	Seed int64
	// Stop lists stop sequences; MaxTokens, when > 0, overrides the client's limit.
	Stop      []string
	MaxTokens int
	// Prefix is prepended to the answer text before Accept sees it and before it is returned
	// (the start of the answer that the prompt itself supplies, such as "1. ").
	Prefix string
	// Accept, when not nil, checks the text (for example that it parses as a list of queries); a
	// rejected text counts as a failed attempt (FaultFormat) and is retried like any other fault.
	Accept func(string) error
}

// Generator produces one chat completion. Implementations retry transient faults themselves;
// the returned error means the request failed for good.
type Generator interface {
	Complete(ctx context.Context, req Request) (Completion, error)
	// Model names the model that answers, as sent in requests.
	Model() string
}

// Completion is a successful answer with how it was obtained.
type Completion struct {
	Text     string
	Attempts int
	// Faults lists the fault class of each failed attempt before the successful one.
	Faults []string
	// Seed is the seed of the attempt that succeeded.
	Seed int64
}

// Fault classes recorded for failed attempts.
const (
	FaultConnection = "connection" // refused, reset, DNS, or any transport error
	FaultTimeout    = "timeout"    // the attempt ran past ClientConfig.Timeout
	FaultHTTP5xx    = "http_5xx"   // the server answered 5xx (or 429)
	FaultHTTP4xx    = "http_4xx"   // the server rejected the request; not retried
	FaultBadJSON    = "bad_json"   // the body is not a complete chat-completion JSON object
	FaultEmpty      = "empty"      // no choices, or an empty message
	FaultFormat     = "format"     // the text does not have the requested format (accept failed)
	FaultCanceled   = "canceled"   // the caller's context ended
)

// RequestError is the final error of a request that failed every attempt.
type RequestError struct {
	URL      string
	Attempts int
	// Faults has one fault class per attempt.
	Faults []string
	// Last is the error of the last attempt.
	Last error
}

// Error names the URL, the attempts, their fault classes and the last error.
func (e *RequestError) Error() string {
	return fmt.Sprintf("chat completion %s: failed after %d attempt(s) (%s): %v", e.URL, e.Attempts, strings.Join(e.Faults, ","), e.Last)
}

// Unwrap is the last attempt's error, for errors.Is and errors.As.
func (e *RequestError) Unwrap() error { return e.Last }

// FinalFault is the fault class of the last attempt.
func (e *RequestError) FinalFault() string {
	if len(e.Faults) == 0 {
		return ""
	}
	return e.Faults[len(e.Faults)-1]
}

// ClientConfig configures an OpenAI-compatible chat-completions client.
type ClientConfig struct {
	// BaseURL is the API root, e.g. http://127.0.0.1:18434/v1; the client POSTs to
	// BaseURL + "/chat/completions".
	BaseURL     string
	Model       string
	Temperature float64
	MaxTokens   int
	// Timeout bounds one attempt (connect, generate, read the body).
	Timeout time.Duration
	// Retries is how many times a failed attempt is repeated (so at most Retries+1 attempts).
	Retries int
	// Backoff is the wait before the first retry; it doubles on each further retry, capped at
	// 16× Backoff; a longer Retry-After of a 429 or 5xx answer is waited instead, and one beyond
	// 5 minutes ends the retries (internal/httpretry).
	Backoff time.Duration
}

// Client is the OpenAI-compatible Generator.
type Client struct {
	cfg  ClientConfig
	http *http.Client
	// sleep waits between retries; tests inject a recorder. It returns early with the context's
	// error when ctx ends.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client that sends its requests through hc (nil means a new http.Client
// without a global timeout; each attempt is bounded by cfg.Timeout).
func NewClient(cfg ClientConfig, hc *http.Client) (*Client, error) {
	if cfg.BaseURL == "" {
		return nil, errors.New("synth client: empty base URL")
	}
	if cfg.Model == "" {
		return nil, errors.New("synth client: empty model name")
	}
	if cfg.Retries < 0 {
		return nil, fmt.Errorf("synth client: retries %d < 0", cfg.Retries)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 2 * time.Minute
	}
	if hc == nil {
		hc = &http.Client{}
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Client{cfg: cfg, http: hc, sleep: httpretry.Sleep}, nil
}

// WithSleep replaces the wait between retries (for tests) and returns the client.
func (c *Client) WithSleep(sleep func(ctx context.Context, d time.Duration) error) *Client {
	c.sleep = sleep
	return c
}

// Model implements Generator.
func (c *Client) Model() string { return c.cfg.Model }

// Config returns the client's configuration.
func (c *Client) Config() ClientConfig { return c.cfg }

// ReportedDigest asks the endpoint for the digest of the client's model: the "digest" or
// "sha256" of its entry in GET /models (OpenAI-compatible servers that report one), else of its
// entry in Ollama's GET /api/tags. It returns "" when the endpoint reports none.
func (c *Client) ReportedDigest(ctx context.Context) (string, error) {
	get := func(url string, v any) error {
		actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(actx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
		}
		return json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(v)
	}
	type entry struct {
		ID     string `json:"id"`
		Name   string `json:"name"`
		Digest string `json:"digest"`
		SHA256 string `json:"sha256"`
	}
	pick := func(es []entry) string {
		for _, e := range es {
			if e.ID == c.cfg.Model || e.Name == c.cfg.Model || e.Name == c.cfg.Model+":latest" {
				if e.Digest != "" {
					return e.Digest
				}
				return e.SHA256
			}
		}
		return ""
	}
	var models struct {
		Data []entry `json:"data"`
	}
	err := get(c.cfg.BaseURL+"/models", &models)
	if d := pick(models.Data); err == nil && d != "" {
		return d, nil
	}
	if root, ok := strings.CutSuffix(c.cfg.BaseURL, "/v1"); ok {
		var tags struct {
			Models []entry `json:"models"`
		}
		if get(root+"/api/tags", &tags) == nil {
			return pick(tags.Models), nil
		}
	}
	return "", err
}

type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	Seed        int64     `json:"seed"`
	Stop        []string  `json:"stop,omitempty"`
	Stream      bool      `json:"stream"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

type attemptError struct {
	fault string
	err   error
	after time.Duration // the server's Retry-After (HTTP 429 and 5xx)
}

func (e *attemptError) Error() string { return e.fault + ": " + e.err.Error() }

// Complete implements Generator.
func (c *Client) Complete(ctx context.Context, r Request) (Completion, error) {
	url := c.cfg.BaseURL + "/chat/completions"
	var faults []string
	var last error
	var done *Completion
	policy := httpretry.Policy{Retries: c.cfg.Retries, Backoff: c.cfg.Backoff}
	attempts, sleepErr := policy.Do(ctx, c.sleep, func(attempt int) httpretry.Verdict {
		s := r.Seed + int64(attempt)
		text, err := c.once(ctx, url, r, s)
		text = r.Prefix + text
		if err == nil && r.Accept != nil {
			if ferr := r.Accept(text); ferr != nil {
				err = &attemptError{fault: FaultFormat, err: ferr}
			}
		}
		if err == nil {
			done = &Completion{Text: text, Attempts: attempt + 1, Faults: faults, Seed: s}
			return httpretry.Verdict{}
		}
		var ae *attemptError
		if !errors.As(err, &ae) {
			ae = &attemptError{fault: FaultConnection, err: err}
		}
		faults = append(faults, ae.fault)
		last = ae
		return httpretry.Verdict{Retry: ae.fault != FaultHTTP4xx && ae.fault != FaultCanceled, RetryAfter: ae.after}
	})
	switch {
	case done != nil:
		return *done, nil
	case sleepErr != nil:
		faults = append(faults, FaultCanceled)
		return Completion{}, &RequestError{URL: url, Attempts: attempts, Faults: faults, Last: sleepErr}
	}
	return Completion{}, &RequestError{URL: url, Attempts: len(faults), Faults: faults, Last: last}
}

// once runs one attempt and classifies its failure.
func (c *Client) once(ctx context.Context, url string, r Request, seed int64) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", &attemptError{fault: FaultCanceled, err: err}
	}
	maxTokens := c.cfg.MaxTokens
	if r.MaxTokens > 0 {
		maxTokens = r.MaxTokens
	}
	body, err := json.Marshal(chatRequest{
		Model: c.cfg.Model, Messages: r.Messages, Temperature: c.cfg.Temperature,
		MaxTokens: maxTokens, Seed: seed, Stop: r.Stop,
	})
	if err != nil {
		return "", &attemptError{fault: FaultBadJSON, err: err}
	}
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", &attemptError{fault: FaultHTTP4xx, err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return "", classifyTransport(ctx, actx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		// A body cut short (connection dropped mid-answer) or a read past the deadline.
		if te := classifyTransport(ctx, actx, err); te.(*attemptError).fault != FaultConnection {
			return "", te
		}
		return "", &attemptError{fault: FaultBadJSON, err: fmt.Errorf("reading body: %w", err)}
	}
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return "", &attemptError{fault: FaultHTTP5xx, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(raw)), after: httpretry.FromResponse(resp, time.Now())}
	case resp.StatusCode >= 400:
		return "", &attemptError{fault: FaultHTTP4xx, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(raw))}
	case resp.StatusCode != http.StatusOK:
		return "", &attemptError{fault: FaultBadJSON, err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, snippet(raw))}
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil {
		return "", &attemptError{fault: FaultBadJSON, err: fmt.Errorf("decoding %q: %w", snippet(raw), err)}
	}
	if len(cr.Choices) == 0 {
		return "", &attemptError{fault: FaultEmpty, err: errors.New("no choices in answer")}
	}
	text := strings.TrimSpace(cr.Choices[0].Message.Content)
	if text == "" {
		return "", &attemptError{fault: FaultEmpty, err: fmt.Errorf("empty message (finish_reason %q)", cr.Choices[0].FinishReason)}
	}
	return text, nil
}

func classifyTransport(ctx, actx context.Context, err error) error {
	if ctx.Err() != nil {
		return &attemptError{fault: FaultCanceled, err: ctx.Err()}
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || actx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()) {
		return &attemptError{fault: FaultTimeout, err: err}
	}
	return &attemptError{fault: FaultConnection, err: err}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
