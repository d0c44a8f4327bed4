// Package serve exposes a router (pkg/router) to agent runtimes: an HTTP JSON API (described by
// openapi.yaml, served at /v1/openapi.yaml) with Prometheus metrics, request-size and rate
// limits and an optional bearer token, and an MCP server (tools find_tools and report_outcome)
// over stdio or streamable HTTP, built on the official Go SDK.
package serve

import (
	"bytes"
	"context"
	"crypto/subtle"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/rated-dev/rated/internal/diskfull"
	"github.com/rated-dev/rated/internal/jsonkeys"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/state"
)

// OpenAPI is the API's OpenAPI 3 description.
//
//go:embed openapi.yaml
var OpenAPI []byte

// Options configures a Server.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer <Token>" on /v1/ and /mcp.
	Token string
	// MaxBodyBytes bounds a request body (default 1 MiB); larger ones get 413.
	MaxBodyBytes int64
	// RateLimit is the sustained requests per second on /v1/ and /mcp (0: unlimited) and
	// RateBurst the burst above it (default: one second's worth); beyond, 429.
	RateLimit float64
	RateBurst int
	// MCP mounts the MCP streamable HTTP endpoint at /mcp.
	MCP bool
	// AllowedHosts are further Host names accepted on a loopback listener, for a reverse proxy
	// on the same machine that passes the public name on (the DNS-rebinding check refuses
	// every other name there).
	AllowedHosts []string
	// MCPSessionIdle closes an MCP session idle this long (0: 30 minutes); a client that never
	// ends its sessions would otherwise keep each one, with its goroutines, for good.
	MCPSessionIdle time.Duration
	// Version is reported by /healthz and the MCP server.
	Version string
	// Registry receives the metrics (nil: a new registry). /metrics serves it.
	Registry *prometheus.Registry
}

// Server is the HTTP API over one router.
type Server struct {
	r       *router.Router
	opts    Options
	limiter *rate.Limiter
	metrics *metrics
	mux     *http.ServeMux
	paths   map[string]*http.ServeMux // method → the paths of its routes (for 405's Allow)
	// crossOrigin refuses state-changing requests a browser sends from another site.
	crossOrigin *http.CrossOriginProtection
	// streams ends when shutdown begins: MCP's server-to-client event streams (GET /mcp) hang
	// until their request's context ends, so they are bound to it.
	streams    context.Context
	endStreams context.CancelFunc
}

// New builds the server; its router is used, not owned.
func New(r *router.Router, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	if opts.MCPSessionIdle <= 0 {
		opts.MCPSessionIdle = 30 * time.Minute
	}
	s := &Server{r: r, opts: opts, mux: http.NewServeMux(), paths: map[string]*http.ServeMux{}, crossOrigin: http.NewCrossOriginProtection()}
	s.streams, s.endStreams = context.WithCancel(context.Background())
	if opts.RateLimit > 0 {
		burst := opts.RateBurst
		if burst <= 0 {
			burst = max(1, int(math.Ceil(opts.RateLimit)))
		}
		s.limiter = rate.NewLimiter(rate.Limit(opts.RateLimit), burst)
	}
	s.metrics = newMetrics(opts.Registry, r)
	s.route("POST /v1/select", s.handleSelect)
	s.route("POST /v1/feedback", s.handleFeedback)
	s.route("GET /v1/tools", s.handleListTools)
	s.route("GET /v1/tools/{id...}", s.handleGetTool)
	s.route("PUT /v1/tools/{id...}", s.handlePutTool)
	s.route("DELETE /v1/tools/{id...}", s.handleDeleteTool)
	s.route("GET /v1/state", s.handleState)
	s.handle("GET /metrics", s.metrics.handler())
	s.handle("GET /healthz", http.HandlerFunc(s.handleHealth))
	s.handle("GET /v1/openapi.yaml", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(OpenAPI)
	}))
	if opts.MCP {
		s.mux.Handle("/mcp", s.guard("/mcp", s.endOnShutdown(NewMCPHandler(r, opts.Version, opts.MaxBodyBytes, opts.MCPSessionIdle))))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if allow := s.allowed(req); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "method",
				fmt.Sprintf("%s %s: the path takes %s (see /v1/openapi.yaml)", req.Method, req.URL.Path, strings.Join(allow, ", ")))
			return
		}
		writeError(w, http.StatusNotFound, "not_found", "path", fmt.Sprintf("no route %s %s (see /v1/openapi.yaml)", req.Method, req.URL.Path))
	})
	return s
}

// routeMethods are the methods the API's routes take, in the order Allow lists them.
var routeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete}

// routeMark marks the paths of one method's routes in Server.paths.
type routeMark struct{}

func (*routeMark) ServeHTTP(http.ResponseWriter, *http.Request) {}

var mark = &routeMark{}

// handle registers a route "METHOD /path" and notes its path under its method.
func (s *Server) handle(pattern string, h http.Handler) {
	s.mux.Handle(pattern, h)
	method, path, _ := strings.Cut(pattern, " ")
	for _, m := range []string{method, http.MethodHead} {
		if m == http.MethodHead && method != http.MethodGet {
			continue // GET routes answer HEAD too
		}
		if s.paths[m] == nil {
			s.paths[m] = http.NewServeMux()
		}
		s.paths[m].Handle(path, mark)
	}
}

// allowed returns the methods the routes take for req's path (none: the path is unknown).
func (s *Server) allowed(req *http.Request) []string {
	var allow []string
	for _, m := range routeMethods {
		// A path match, not a redirect to the path with a trailing slash.
		if pm := s.paths[m]; pm != nil {
			if h, _ := pm.Handler(req); h == mark {
				allow = append(allow, m)
			}
		}
	}
	return allow
}

// Handler returns the HTTP handler.
func (s *Server) Handler() http.Handler { return s.mux }

// route registers an API handler behind the guard (auth, rate limit, body limit) and the
// metrics. Handlers return (status, error): a nil error means they wrote the response.
func (s *Server) route(pattern string, h func(w http.ResponseWriter, req *http.Request) error) {
	name := pattern
	s.handle(pattern, s.guard(name, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		req.Body = http.MaxBytesReader(w, req.Body, s.opts.MaxBodyBytes)
		if err := h(w, req); err != nil {
			s.writeRouterError(w, err)
		}
	})))
}

// guard applies the bearer token and the rate limit, and measures the request.
func (s *Server) guard(name string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() { s.metrics.observe(name, rec.status, time.Since(start)) }()
		// A web page must not reach the API: not from another origin (the browser says so in
		// Sec-Fetch-Site or Origin), nor through a name of its own resolved to this loopback
		// address (DNS rebinding, where Origin and Host agree). Clients outside a browser send
		// neither header and pass.
		if err := s.crossOrigin.Check(req); err != nil {
			writeError(rec, http.StatusForbidden, "cross_origin", "Origin", err.Error())
			return
		}
		if s.reboundHost(req) {
			writeError(rec, http.StatusForbidden, "invalid_host", "Host", fmt.Sprintf("%q is not a loopback name, and the server listens on a loopback address (a proxy that passes its public name on: --allow-host)", req.Host))
			return
		}
		if s.opts.Token != "" {
			// The scheme is case-insensitive (RFC 9110, section 11.1); the token is not.
			scheme, got, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
			ok = ok && strings.EqualFold(scheme, "Bearer")
			if !ok || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.opts.Token)) != 1 {
				rec.Header().Set("WWW-Authenticate", `Bearer realm="rated"`)
				writeError(rec, http.StatusUnauthorized, "unauthorized", "Authorization", "a valid bearer token is required")
				return
			}
		}
		if s.limiter != nil && !s.limiter.Allow() {
			rec.Header().Set("Retry-After", "1")
			writeError(rec, http.StatusTooManyRequests, "rate_limited", "", fmt.Sprintf("more than %g requests per second", s.opts.RateLimit))
			return
		}
		next.ServeHTTP(rec, req)
	})
}

// reboundHost reports whether req reached a loopback listener under a Host that is neither a
// loopback name or address nor one of Options.AllowedHosts.
func (s *Server) reboundHost(req *http.Request) bool {
	local, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !isLoopback(local.String()) || isLoopback(req.Host) {
		return false
	}
	host, _, err := net.SplitHostPort(req.Host)
	if err != nil {
		host = req.Host
	}
	for _, h := range s.opts.AllowedHosts {
		if strings.EqualFold(h, host) {
			return false
		}
	}
	return true
}

// isLoopback reports whether hostport (a host, or host:port) names the loopback interface.
func isLoopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Flush lets streaming responses (MCP's event streams) through.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// apiError is the body of every error response.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	// Code is a stable machine-readable kind; Field the request field at fault ("" when none).
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, field, msg string) {
	writeJSON(w, status, apiError{Error: errorBody{Code: code, Field: field, Message: msg}})
}

// writeRouterError maps an error to its status: client errors to 4xx naming the field,
// storage and overload to 503, anything else (the server's own failure) to 500.
func (s *Server) writeRouterError(w http.ResponseWriter, err error) {
	var ie *router.InputError
	var be *bodyError
	switch {
	case errors.As(err, &be):
		writeError(w, be.status, be.code, be.field, be.msg)
	case errors.As(err, &ie):
		writeError(w, http.StatusBadRequest, "invalid_field", ie.Field, ie.Message)
	case errors.Is(err, router.ErrUnknownDecision):
		writeError(w, http.StatusNotFound, "unknown_decision", errorField(err), err.Error())
	case errors.Is(err, router.ErrUnknownTool):
		writeError(w, http.StatusNotFound, "unknown_tool", errorField(err), err.Error())
	case errors.Is(err, router.ErrConflict):
		writeError(w, http.StatusConflict, "conflicting_report", errorField(err), err.Error())
	case errors.Is(err, router.ErrNoTools):
		writeError(w, http.StatusConflict, "empty_catalog", "", err.Error())
	case errors.Is(err, diskfull.ErrFull):
		w.Header().Set("Retry-After", "30")
		writeError(w, http.StatusServiceUnavailable, "storage_full", "", err.Error())
	case errors.Is(err, router.ErrOverloaded), errors.Is(err, router.ErrClosed), errors.Is(err, state.ErrUnavailable):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "unavailable", "", err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// A report may still be committed after it: a retry is answered from its outcome.
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "timeout", "", err.Error())
	default:
		writeError(w, http.StatusInternalServerError, "internal", "", err.Error())
	}
}

// errorField is the request field the router's client errors that are not *router.InputError
// are about ("" for the others).
func errorField(err error) string {
	switch {
	case errors.Is(err, router.ErrUnknownDecision):
		return "decision_id"
	case errors.Is(err, router.ErrUnknownTool):
		return "tool"
	case errors.Is(err, router.ErrConflict):
		return "executed"
	}
	return ""
}

// bodyError is a request body that is not what the route expects.
type bodyError struct {
	status           int
	code, field, msg string
}

func (e *bodyError) Error() string { return e.field + ": " + e.msg }

// decode reads one JSON object into v strictly: unknown fields, wrong types, trailing data and
// oversized bodies are client errors naming the field (or "body").
func decode(req *http.Request, v any) error {
	raw, err := io.ReadAll(req.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return &bodyError{http.StatusRequestEntityTooLarge, "body_too_large", "body", fmt.Sprintf("larger than %d bytes", mbe.Limit)}
	}
	if err != nil {
		return &bodyError{http.StatusBadRequest, "unreadable_body", "body", err.Error()}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", "a JSON object is required"}
	}
	if !utf8.Valid(raw) { // encoding/json would replace the bad bytes silently
		i := 0
		for i < len(raw) {
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", fmt.Sprintf("not valid UTF-8 (at byte %d)", i)}
	}
	// encoding/json matches keys case-insensitively and keeps the last of duplicate keys: check
	// the keys exactly first.
	if err := checkKeys(json.NewDecoder(bytes.NewReader(raw)), reflect.TypeOf(v)); err != nil && err != jsonkeys.ErrMalformed {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	// dec.More is false before a stray '}' or ']', so the rest is checked for anything but
	// JSON's white space.
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", fmt.Sprintf("trailing data after the JSON object (at byte %d)", len(raw)-len(rest))}
	}
	return nil
}

// checkKeys is jsonkeys.Check with its refusals as the API's 400 errors, naming the field; the
// jsonkeys.ErrMalformed it returns on JSON it cannot read is left to the decoder that follows,
// which names the byte.
func checkKeys(dec *json.Decoder, t reflect.Type) error {
	err := jsonkeys.Check(dec, t, "this request")
	var ke *jsonkeys.Error
	if !errors.As(err, &ke) {
		return err
	}
	if ke.Kind == jsonkeys.TooDeep {
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", ke.Msg}
	}
	return &bodyError{http.StatusBadRequest, ke.Kind, ke.Path, ke.Msg}
}

func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", fmt.Sprintf("%v (at byte %d)", se, se.Offset)}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return &bodyError{http.StatusBadRequest, "wrong_type", field, fmt.Sprintf("must be %s, got JSON %s", jsonKind(te.Type.Kind().String()), te.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &bodyError{http.StatusBadRequest, "unknown_field", field, "is not a field of this request"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &bodyError{http.StatusBadRequest, "invalid_json", "body", "truncated JSON"}
	}
	return &bodyError{http.StatusBadRequest, "invalid_json", "body", err.Error()}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return "a number in range"
}

// selectRequest is the body of POST /v1/select.
type selectRequest struct {
	Query   string      `json:"query"`
	K       integerJSON `json:"k,omitempty"`
	Exclude []string    `json:"exclude,omitempty"`
}

// integerJSON is an integer field that also takes a number with a zero fraction (10.0, 1e1), as
// JSON Schema's integer does and as clients that hold every number as a float send it; 10.5
// stays a wrong type.
type integerJSON int

// UnmarshalJSON implements json.Unmarshaler.
func (n *integerJSON) UnmarshalJSON(b []byte) error {
	var f float64
	if err := json.Unmarshal(b, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return &json.UnmarshalTypeError{Value: jsonValueKind(b) + " " + string(b), Type: reflect.TypeFor[int]()}
	}
	*n = integerJSON(f)
	return nil
}

// jsonValueKind names the kind of a JSON value by its first byte, for a wrong-type error.
func jsonValueKind(b []byte) string {
	switch b = bytes.TrimSpace(b); {
	case len(b) == 0:
		return "value"
	case b[0] == '"':
		return "string"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	case b[0] == 'n':
		return "null"
	}
	return "number"
}

// SelectResponse is the answer of POST /v1/select and of the MCP tool find_tools.
type SelectResponse struct {
	DecisionID string       `json:"decision_id" jsonschema:"the id to report outcomes with (empty when no tool matched)"`
	Step       int64        `json:"step" jsonschema:"the policy's step clock at the decision"`
	Tools      []RankedTool `json:"tools" jsonschema:"the candidates in the policy's order: the first is its choice"`
}

// RankedTool is one candidate of a selection; score parts the policy lacks are null.
type RankedTool struct {
	ID          string   `json:"id"`
	Score       *float64 `json:"score" jsonschema:"the policy's fused score"`
	Relevance   *float64 `json:"relevance" jsonschema:"the relevance model's estimate of P(relevant)"`
	Reliability *float64 `json:"reliability" jsonschema:"the estimated probability that the tool executes now"`
	Semantic    float64  `json:"semantic" jsonschema:"the retriever's semantic score"`
	Calibrated  float64  `json:"calibrated" jsonschema:"P(relevant | retrieval features)"`
	Prior       float64  `json:"prior" jsonschema:"the static metadata prior"`
	Masked      bool     `json:"masked" jsonschema:"a health check excludes the tool now"`
	Propensity  float64  `json:"propensity" jsonschema:"the probability that the policy chose this tool"`
}

func toResponse(sel *router.Selection) SelectResponse {
	out := SelectResponse{DecisionID: sel.DecisionID, Step: sel.Step, Tools: []RankedTool{}}
	num := func(v float64) *float64 {
		if math.IsNaN(v) {
			return nil
		}
		return &v
	}
	for _, t := range sel.Tools {
		out.Tools = append(out.Tools, RankedTool{ID: t.ID, Score: num(t.Score), Relevance: num(t.Relevance), Reliability: num(t.Reliability),
			Semantic: t.Semantic, Calibrated: t.Calibrated, Prior: t.Prior, Masked: t.Masked, Propensity: t.Propensity})
	}
	return out
}

func (s *Server) handleSelect(w http.ResponseWriter, req *http.Request) error {
	var in selectRequest
	if err := decode(req, &in); err != nil {
		return err
	}
	sel, err := s.r.Select(req.Context(), in.Query, router.SelectOptions{K: int(in.K), Exclude: in.Exclude})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toResponse(sel))
	return nil
}

// feedbackRequest is the body of POST /v1/feedback.
type feedbackRequest struct {
	DecisionID  string   `json:"decision_id"`
	Tool        string   `json:"tool"`
	Executed    *bool    `json:"executed"`
	TaskSuccess *bool    `json:"task_success,omitempty"`
	LatencyMS   *float64 `json:"latency_ms,omitempty"`
}

// maxLatencyMS bounds a reported latency (a day).
const maxLatencyMS = 24 * 3600 * 1000

// report validates a feedback request (shared by HTTP and MCP) and records it.
func report(ctx context.Context, r *router.Router, in feedbackRequest) (router.Receipt, error) {
	if in.Executed == nil {
		return router.Receipt{}, &router.InputError{Field: "executed", Message: "is required (true when the tool ran without an error or a timeout)"}
	}
	latency := time.Duration(-1)
	if in.LatencyMS != nil {
		ms := *in.LatencyMS
		if !(ms >= 0 && ms <= maxLatencyMS) {
			return router.Receipt{}, &router.InputError{Field: "latency_ms", Message: fmt.Sprintf("must be between 0 and %d, got %v", maxLatencyMS, ms)}
		}
		latency = time.Duration(ms * float64(time.Millisecond))
	}
	return r.Report(ctx, in.DecisionID, in.Tool, router.Outcome{Executed: *in.Executed, Task: in.TaskSuccess}, latency)
}

func (s *Server) handleFeedback(w http.ResponseWriter, req *http.Request) error {
	var in feedbackRequest
	if err := decode(req, &in); err != nil {
		return err
	}
	rc, err := report(req.Context(), s.r, in)
	if err != nil {
		return err
	}
	status := "recorded"
	if rc.Duplicate {
		status = "duplicate"
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
	return nil
}

func (s *Server) handleListTools(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"tools": s.r.Tools()})
	return nil
}

func (s *Server) handleGetTool(w http.ResponseWriter, req *http.Request) error {
	id := req.PathValue("id")
	t, ok := s.r.Tool(id)
	if !ok {
		writeError(w, http.StatusNotFound, "unknown_tool", "id", "no tool "+strconv.Quote(id))
		return nil
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

func (s *Server) handlePutTool(w http.ResponseWriter, req *http.Request) error {
	id := req.PathValue("id")
	var t catalog.Tool
	if err := decode(req, &t); err != nil {
		return err
	}
	if t.ID == "" {
		t.ID = id
	}
	if t.ID != id {
		return &router.InputError{Field: "id", Message: fmt.Sprintf("%q differs from the path's %q", t.ID, id)}
	}
	if t.Prior != nil {
		return &router.InputError{Field: "prior", Message: "is computed by the router; leave it out"}
	}
	added, updated, err := s.r.PutTools(req.Context(), []catalog.Tool{t})
	if err != nil {
		var ie *router.InputError
		if errors.As(err, &ie) {
			ie.Field = strings.TrimPrefix(ie.Field, "tools[0].")
		}
		return err
	}
	status, result := http.StatusOK, "unchanged"
	switch {
	case added > 0:
		status, result = http.StatusCreated, "created"
	case updated > 0:
		result = "updated"
	}
	stored, _ := s.r.Tool(id)
	writeJSON(w, status, map[string]any{"status": result, "tool": stored})
	return nil
}

func (s *Server) handleDeleteTool(w http.ResponseWriter, req *http.Request) error {
	id := req.PathValue("id")
	if err := s.r.DeleteTool(req.Context(), id); err != nil {
		if errors.Is(err, router.ErrUnknownTool) {
			writeError(w, http.StatusNotFound, "unknown_tool", "id", err.Error())
			return nil
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	info := s.r.Info()
	status, code := "ok", http.StatusOK
	if info.Degraded != "" {
		status, code = "degraded", http.StatusServiceUnavailable
	}
	writeJSON(w, code, map[string]any{"status": status, "version": s.opts.Version, "policy": info.Policy,
		"retriever": info.Frontend, "calibration": info.Calibration, "tools": info.Tools, "pending_decisions": info.Pending,
		"step": info.Step, "boot": info.Boot, "storage_error": info.Degraded, "applied_seq": info.Applied,
		"replica": info.Replica, "follow_age_ms": ms(info.FollowAge), "unshared_decisions": info.UnsharedDecisions})
}

// ms is a duration in milliseconds, for JSON.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// StateResponse is the answer of GET /v1/state: where the replica is in the state's log and a
// digest of what it learned there, so replicas (and a router fed the same log) can be compared.
type StateResponse struct {
	AppliedSeq   uint64  `json:"applied_seq"`
	PolicySHA256 string  `json:"policy_sha256"`
	Replica      bool    `json:"replica"`
	FollowAgeMS  float64 `json:"follow_age_ms"`
}

func (s *Server) handleState(w http.ResponseWriter, req *http.Request) error {
	if req.URL.Query().Get("sync") == "1" {
		if err := s.r.Sync(req.Context()); err != nil {
			return err
		}
	}
	seq, digest, err := s.r.StateDigest()
	if err != nil {
		return err
	}
	info := s.r.Info()
	writeJSON(w, http.StatusOK, StateResponse{AppliedSeq: seq, PolicySHA256: digest, Replica: info.Replica, FollowAgeMS: ms(info.FollowAge)})
	return nil
}

// endOnShutdown ends the event streams of next (GET requests, which hang until their context
// ends) when shutdown begins; other requests finish as they would.
func (s *Server) endOnShutdown(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(req.Context())
			defer cancel()
			stop := context.AfterFunc(s.streams, cancel)
			defer stop()
			req = req.WithContext(ctx)
		}
		next.ServeHTTP(w, req)
	})
}

// ErrShutdownGrace is returned by Serve when requests were still running after the shutdown
// grace: their connections were closed.
var ErrShutdownGrace = errors.New("requests still running after the shutdown grace were cut off")

// Serve answers on ln until ctx ends, then shuts down gracefully: it stops accepting, ends MCP's
// event streams, lets requests in flight finish (up to grace), closes the connections still
// open then (returning ErrShutdownGrace), and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	if s.opts.MCP {
		srv.WriteTimeout = 0 // MCP's server-to-client event streams stay open
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.RegisterOnShutdown(s.endStreams)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc
	if errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
		return fmt.Errorf("%w (after %s)", ErrShutdownGrace, grace)
	}
	return err
}
