package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/rated-dev/rated/pkg/router"
)

// FindToolsArgs are the arguments of the MCP tool find_tools.
type FindToolsArgs struct {
	Query   string   `json:"query" jsonschema:"what the agent needs a tool for, in natural language"`
	K       int      `json:"k,omitempty" jsonschema:"how many candidates to rank (default: the server's K)"`
	Exclude []string `json:"exclude,omitempty" jsonschema:"ids of tools already tried for this request (a fallback after a failure)"`
}

// ReportOutcomeArgs are the arguments of the MCP tool report_outcome.
type ReportOutcomeArgs struct {
	DecisionID  string   `json:"decision_id" jsonschema:"the decision_id returned by find_tools"`
	Tool        string   `json:"tool" jsonschema:"the id of the tool that was executed"`
	Executed    bool     `json:"executed" jsonschema:"true when the tool returned without an error or a timeout"`
	TaskSuccess *bool    `json:"task_success,omitempty" jsonschema:"whether the tool served the request, when known"`
	LatencyMS   *float64 `json:"latency_ms,omitempty" jsonschema:"the tool's execution time in milliseconds"`
}

// ReportOutcomeResult is report_outcome's answer.
type ReportOutcomeResult struct {
	Status string `json:"status" jsonschema:"recorded, or duplicate when this outcome was already recorded"`
}

// NewMCPServer returns an MCP server with two tools over r: find_tools ranks the catalog's
// tools for a request (as POST /v1/select) and report_outcome records what happened when one
// ran (as POST /v1/feedback). Client errors come back as tool errors naming the field.
func NewMCPServer(r *router.Router, version string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "rated", Title: "RATED tool router", Version: version}, &mcp.ServerOptions{
		Instructions: "Call find_tools with the request to get the tools to try, best first, and a decision_id; " +
			"after executing a tool, call report_outcome with the decision_id, the tool and whether it ran (and served the request, if known).",
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "find_tools", Title: "Find tools",
		Description: "Ranks the catalog's tools for a request by relevance and current reliability; the first tool is the router's choice.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: new(bool)}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in FindToolsArgs) (*mcp.CallToolResult, SelectResponse, error) {
			sel, err := r.Select(ctx, in.Query, router.SelectOptions{K: in.K, Exclude: in.Exclude})
			if err != nil {
				return nil, SelectResponse{}, toolError(err)
			}
			return nil, toResponse(sel), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "report_outcome", Title: "Report a tool's outcome",
		Description: "Records whether a tool chosen by find_tools executed (and served the request), so the router learns which tools work now."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in ReportOutcomeArgs) (*mcp.CallToolResult, ReportOutcomeResult, error) {
			executed := in.Executed
			rc, err := report(ctx, r, feedbackRequest{DecisionID: in.DecisionID, Tool: in.Tool, Executed: &executed,
				TaskSuccess: in.TaskSuccess, LatencyMS: in.LatencyMS})
			if err != nil {
				return nil, ReportOutcomeResult{}, toolError(err)
			}
			if rc.Duplicate {
				return nil, ReportOutcomeResult{Status: "duplicate"}, nil
			}
			return nil, ReportOutcomeResult{Status: "recorded"}, nil
		})
	srv.AddReceivingMiddleware(argumentFirst)
	return srv
}

// schemaField finds the argument the SDK's schema validation names: a property's path, or the
// first of a list of missing or unexpected properties.
var schemaField = regexp.MustCompile(`/properties/([A-Za-z_]+)|properties:? \["([A-Za-z_]+)"`)

// argumentFirst makes the SDK's own refusals of a tool call's arguments (its JSON-schema check,
// before our handlers run) start with the argument at fault, as our handlers' errors do
// ("query: validating …"), so a client reads one form of error; and it refuses an argument
// given twice, as the HTTP API does.
func argumentFirst(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// A key given twice is refused as over HTTP (the SDK keeps the last one silently).
		if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil && len(call.Params.Arguments) > 0 {
			var be *bodyError
			if err := checkKeys(json.NewDecoder(bytes.NewReader(call.Params.Arguments)), nil); errors.As(err, &be) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: be.Error()}}}, nil
			}
		}
		res, err := next(ctx, method, req)
		ctr, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !ctr.IsError || len(ctr.Content) == 0 {
			return res, err
		}
		tc, ok := ctr.Content[0].(*mcp.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, `validating "arguments"`) {
			return res, err
		}
		if m := schemaField.FindStringSubmatch(tc.Text); m != nil {
			tc.Text = m[1] + m[2] + ": " + tc.Text
		}
		return res, err
	}
}

// toolError prefixes a tool's error with the argument at fault, as the HTTP API's error body
// names its field ("decision_id: unknown or expired decision: …"); an *router.InputError names
// it already.
func toolError(err error) error {
	var ie *router.InputError
	if errors.As(err, &ie) {
		return err
	}
	if field := errorField(err); field != "" {
		return fmt.Errorf("%s: %w", field, err)
	}
	return err
}

// NewMCPHandler serves the MCP server over streamable HTTP (mount it at /mcp), closing sessions
// idle for sessionIdle (0: never). It does not check Host against DNS rebinding: Server's guard
// does, in front of it. Its refusals come back as JSON-RPC errors, as over stdio
// (see jsonRPCRefusals).
func NewMCPHandler(r *router.Router, version string, maxBody int64, sessionIdle time.Duration) http.Handler {
	srv := NewMCPServer(r, version)
	return jsonRPCRefusals(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxBody, SessionTimeout: sessionIdle,
			// The server's guard checks Host (with its allowed names) before this handler.
			DisableLocalhostProtection: true}), maxBody)
}

// JSON-RPC 2.0's error code for a request whose method the server does not have.
const codeMethodNotFound = -32601

// jsonRPCRefusals rewrites the plain-text errors of the SDK's handler (malformed JSON, a message
// that is not JSON-RPC, a method it does not have under protocol versions before 2026-07-28, a
// body past maxBody bytes, a wrong content type, method or Host, an unknown session) as the
// JSON-RPC error the specification prescribes, in a JSON body a client can read: -32700 parse
// error when a JSON body does not parse, -32601 method not found, else -32600 invalid request;
// an initialize whose params are not an object is refused here with -32602 (the SDK's code 0);
// the request's id where its body has a usable one; the HTTP status and the SDK's message kept.
// Every other response passes unchanged.
func jsonRPCRefusals(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var body []byte
		if req.Method == http.MethodPost {
			// One byte past the limit, so that the SDK still sees an oversized body as one.
			var err error
			if body, err = io.ReadAll(io.LimitReader(req.Body, maxBody+1)); err != nil {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(errorResponse(nil, codeInvalidRequest, "reading the request body: "+err.Error()))
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(body))
			if msg, bad := badInitializeParams(body); bad {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(errorResponse(requestID(body), codeInvalidParams, msg))
				return
			}
		}
		rw := &refusalWriter{ResponseWriter: w}
		next.ServeHTTP(rw, req)
		if !rw.refused {
			return
		}
		msg := strings.TrimSpace(rw.text.String())
		mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
		code := codeInvalidRequest
		switch {
		case rw.status == http.StatusBadRequest && mt == "application/json" && int64(len(body)) <= maxBody && !json.Valid(bytes.TrimSpace(body)):
			code = codeParseError
		case strings.Contains(msg, "JSON RPC not handled"):
			code = codeMethodNotFound
		}
		w.Header().Del("X-Content-Type-Options")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rw.status)
		w.Write(errorResponse(requestID(body), code, msg))
	})
}

// refusalWriter holds back a plain-text error response (status ≥ 400 with a text/plain body, as
// http.Error writes) for jsonRPCRefusals to rewrite, and passes every other response through,
// streaming included.
type refusalWriter struct {
	http.ResponseWriter
	status  int
	refused bool
	text    bytes.Buffer
}

func (r *refusalWriter) WriteHeader(code int) {
	if code >= 400 && strings.HasPrefix(r.Header().Get("Content-Type"), "text/plain") {
		r.status, r.refused = code, true
		return
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *refusalWriter) Write(p []byte) (int, error) {
	if r.refused {
		return r.text.Write(p)
	}
	return r.ResponseWriter.Write(p)
}

// Flush lets the SDK's event streams through.
func (r *refusalWriter) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok && !r.refused {
		f.Flush()
	}
}

// ServeStdio runs the MCP server on newline-delimited JSON-RPC over in and out (standard input
// and output) until ctx ends or in does. A line that is not a JSON-RPC message is answered with
// a JSON-RPC error (-32700 parse error, -32600 invalid request) and noted on log; the session
// goes on.
func ServeStdio(ctx context.Context, r *router.Router, version string, in io.Reader, out, log io.Writer) error {
	t := &lineTransport{in: in, out: out, log: log, maxLine: mcp.DefaultMaxLineLength}
	return NewMCPServer(r, version).Run(ctx, t)
}
