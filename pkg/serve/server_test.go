package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/rated-dev/rated/internal/testfs"
	"github.com/rated-dev/rated/pkg/bandit"
	"github.com/rated-dev/rated/pkg/catalog"
	"github.com/rated-dev/rated/pkg/defaultbench"
	"github.com/rated-dev/rated/pkg/router"
	"github.com/rated-dev/rated/pkg/serve"
	"github.com/rated-dev/rated/pkg/state"
)

var fixture struct {
	once  sync.Once
	tools []catalog.Tool
	cal   *bandit.Calibrator
	err   error
}

// newRouter is a router over the embedded default benchmark's catalog, BM25 with hashed
// contexts, the recommended policy, in memory.
func newRouter(t testing.TB) *router.Router {
	t.Helper()
	fixture.once.Do(func() {
		b, err := defaultbench.Load()
		if err != nil {
			fixture.err = err
			return
		}
		fixture.tools = b.Tools
		front, _ := router.NewLexicalFrontend(64)
		fixture.cal, _, fixture.err = router.FitCalibration(front, b, "dev", 10, bandit.DefaultHubnessDepth, bandit.DefaultHubnessStrength)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	front, _ := router.NewLexicalFrontend(64)
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: fixture.tools, Calibrator: fixture.cal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type client struct {
	t     testing.TB
	base  string
	token string
}

func (c client) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &out); err != nil {
			c.t.Fatalf("%s %s: response is not JSON: %s", method, path, raw)
		}
	}
	return resp.StatusCode, out
}

func errField(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	f, _ := e["field"].(string)
	return f
}

func TestSelectFeedbackAndTools(t *testing.T) {
	r := newRouter(t)
	reg := prometheus.NewRegistry()
	ts := httptest.NewServer(serve.New(r, serve.Options{Registry: reg, Version: "test"}).Handler())
	defer ts.Close()
	c := client{t: t, base: ts.URL}

	code, sel := c.do("POST", "/v1/select", `{"query": "send an email to my team", "k": 4}`)
	if code != 200 || sel["decision_id"] == "" || len(sel["tools"].([]any)) != 4 {
		t.Fatalf("select: %d %v", code, sel)
	}
	first := sel["tools"].([]any)[0].(map[string]any)
	if first["propensity"].(float64) != 1 || first["score"] == nil || first["masked"] != false {
		t.Fatalf("first tool: %v", first)
	}
	id, tool := sel["decision_id"].(string), first["id"].(string)
	fb := fmt.Sprintf(`{"decision_id": %q, "tool": %q, "executed": true, "task_success": false, "latency_ms": 812.5}`, id, tool)
	if code, body := c.do("POST", "/v1/feedback", fb); code != 200 || body["status"] != "recorded" {
		t.Fatalf("feedback: %d %v", code, body)
	}
	if code, body := c.do("POST", "/v1/feedback", fb); code != 200 || body["status"] != "duplicate" {
		t.Fatalf("repeated feedback: %d %v", code, body)
	}
	conflict := strings.Replace(fb, `"executed": true, "task_success": false`, `"executed": false`, 1)
	if code, body := c.do("POST", "/v1/feedback", conflict); code != 409 || errField(body) != "executed" {
		t.Fatalf("conflicting feedback: %d %v", code, body)
	}

	// The catalog: ids with slashes in the path.
	newTool := `{"name": "pdf_to_text", "platform": "other", "description": "Extracts the text of a PDF document."}`
	if code, body := c.do("PUT", "/v1/tools/other/pdf/pdf_to_text", newTool); code != 201 || body["status"] != "created" {
		t.Fatalf("put: %d %v", code, body)
	}
	if code, body := c.do("PUT", "/v1/tools/other/pdf/pdf_to_text", newTool); code != 200 || body["status"] != "unchanged" {
		t.Fatalf("put again: %d %v", code, body)
	}
	code, got := c.do("GET", "/v1/tools/other/pdf/pdf_to_text", "")
	if code != 200 || got["id"] != "other/pdf/pdf_to_text" || got["prior"] == nil {
		t.Fatalf("get: %d %v", code, got)
	}
	// Retrieved as the best semantic match (the policy may still rank a tool it knows more
	// about first: the calibration's hubness feature has no count for a tool added now).
	code, sel = c.do("POST", "/v1/select", `{"query": "extract text from a pdf document"}`)
	var added map[string]any
	best := 0.0
	for _, x := range sel["tools"].([]any) {
		m := x.(map[string]any)
		best = math.Max(best, m["semantic"].(float64))
		if m["id"] == "other/pdf/pdf_to_text" {
			added = m
		}
	}
	if code != 200 || added == nil || added["semantic"].(float64) != best {
		t.Fatalf("the new tool is not retrieved as the best semantic match: %d %v", code, sel)
	}
	// Its calibration, by hand: the retriever's top candidate (S_sem 1 after the lexical
	// normalisation, no gap, rank 0), a tool the calibration's bank never covered, so its
	// hubness feature is the bank catalog's mean.
	cal := fixture.cal
	if cal.Hub == nil {
		t.Fatalf("the default benchmark's calibration dropped its hubness feature (%s): this check needs it", cal.HubDropped)
	}
	z := cal.Weights[0] + cal.Weights[1]*1 + cal.Hub.Weight*cal.Hub.Unknown()
	if want := 1 / (1 + math.Exp(-z)); math.Abs(added["calibrated"].(float64)-want) > 1e-12 {
		t.Fatalf("the new tool's calibrated relevance %v, want %v by hand", added["calibrated"], want)
	}
	if code, _ := c.do("DELETE", "/v1/tools/other/pdf/pdf_to_text", ""); code != 204 {
		t.Fatalf("delete: %d", code)
	}
	if code, body := c.do("GET", "/v1/tools/other/pdf/pdf_to_text", ""); code != 404 || errField(body) != "id" {
		t.Fatalf("get deleted: %d %v", code, body)
	}
	if code, body := c.do("DELETE", "/v1/tools/other/pdf/pdf_to_text", ""); code != 404 {
		t.Fatalf("delete twice: %d %v", code, body)
	}
	// A deleted tool put again is created again (RFC 9110: 201), not "updated".
	if code, body := c.do("PUT", "/v1/tools/other/pdf/pdf_to_text", newTool); code != 201 || body["status"] != "created" {
		t.Fatalf("put after delete: %d %v", code, body)
	}
	if code, _ := c.do("DELETE", "/v1/tools/other/pdf/pdf_to_text", ""); code != 204 {
		t.Fatalf("delete again: %d", code)
	}
	if code, body := c.do("GET", "/healthz", ""); code != 200 || body["status"] != "ok" || body["tools"].(float64) != float64(len(fixture.tools)) {
		t.Fatalf("healthz: %d %v", code, body)
	}
	resp, _ := http.Get(ts.URL + "/metrics")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`rated_http_requests_total{code="200",route="POST /v1/select"} 2`, "rated_tools 316", "rated_pending_decisions 2"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestClientErrorsAre4xxNamingTheField covers the list: unknown ids, oversized
// bodies, wrong types, numbers out of range, and more.
func TestClientErrorsAre4xxNamingTheField(t *testing.T) {
	r := newRouter(t)
	ts := httptest.NewServer(serve.New(r, serve.Options{MaxBodyBytes: 4096}).Handler())
	defer ts.Close()
	c := client{t: t, base: ts.URL}
	_, sel := c.do("POST", "/v1/select", `{"query": "weather in Oslo"}`)
	id := sel["decision_id"].(string)
	tool := sel["tools"].([]any)[0].(map[string]any)["id"].(string)
	fb := func(rest string) string {
		return fmt.Sprintf(`{"decision_id": %q, "tool": %q%s}`, id, tool, rest)
	}
	for _, tc := range []struct {
		name, method, path, body string
		code                     int
		field                    string
	}{
		{"empty body", "POST", "/v1/select", ``, 400, "body"},
		{"not JSON", "POST", "/v1/select", `query=weather`, 400, "body"},
		{"truncated", "POST", "/v1/select", `{"query": "wea`, 400, "body"},
		{"trailing data", "POST", "/v1/select", `{"query": "weather"} {}`, 400, "body"},
		// dec.More is false before these: they used to be accepted.
		{"trailing brace", "POST", "/v1/select", `{"query": "weather"}}`, 400, "body"},
		{"trailing brackets", "POST", "/v1/select", `{"query": "weather"}]]}`, 400, "body"},
		{"array body", "POST", "/v1/select", `["weather"]`, 400, "body"},
		{"unknown field", "POST", "/v1/select", `{"query": "weather", "limit": 3}`, 400, "limit"},
		{"query wrong type", "POST", "/v1/select", `{"query": 42}`, 400, "query"},
		{"k wrong type", "POST", "/v1/select", `{"query": "weather", "k": "3"}`, 400, "k"},
		{"k fractional", "POST", "/v1/select", `{"query": "weather", "k": 2.5}`, 400, "k"},
		{"k too large", "POST", "/v1/select", `{"query": "weather", "k": 1000}`, 400, "k"},
		{"query missing", "POST", "/v1/select", `{"k": 3}`, 400, "query"},
		{"query null byte", "POST", "/v1/select", `{"query": "a\u0000b"}`, 400, "query"},
		{"exclude wrong type", "POST", "/v1/select", `{"query": "weather", "exclude": "x"}`, 400, "exclude"},
		{"oversized body", "POST", "/v1/select", `{"query": "` + strings.Repeat("a", 5000) + `"}`, 413, "body"},
		{"unknown decision", "POST", "/v1/feedback", `{"decision_id": "nope", "tool": "x", "executed": true}`, 404, "decision_id"},
		{"unknown tool", "POST", "/v1/feedback", fb(`, "executed": true`)[:0] + fmt.Sprintf(`{"decision_id": %q, "tool": "no/such/tool", "executed": true}`, id), 404, "tool"},
		{"executed missing", "POST", "/v1/feedback", fb(``), 400, "executed"},
		{"executed wrong type", "POST", "/v1/feedback", fb(`, "executed": "yes"`), 400, "executed"},
		{"latency NaN-like", "POST", "/v1/feedback", fb(`, "executed": true, "latency_ms": 1e999`), 400, "latency_ms"},
		{"latency negative", "POST", "/v1/feedback", fb(`, "executed": true, "latency_ms": -5`), 400, "latency_ms"},
		{"latency string NaN", "POST", "/v1/feedback", fb(`, "executed": true, "latency_ms": "NaN"`), 400, "latency_ms"},
		{"served without running", "POST", "/v1/feedback", fb(`, "executed": false, "task_success": true`), 400, "task_success"},
		{"put: id mismatch", "PUT", "/v1/tools/a/b", `{"id": "c/d", "name": "x", "platform": "other"}`, 400, "id"},
		{"put: no name", "PUT", "/v1/tools/a/b", `{"platform": "other"}`, 400, "name"},
		{"put: prior given", "PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "prior": {"value": 1}}`, 400, "prior"},
		{"put: probe latency out of range", "PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "probe": {"status": "reachable", "latency_ms": 1e400, "checked_at": "2026-01-01T00:00:00Z"}}`, 400, "probe.latency_ms"},
		{"put: wrong type", "PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "tags": "t"}`, 400, "tags"},
		{"unknown route", "GET", "/v2/nothing", ``, 404, "path"},
	} {
		code, body := c.do(tc.method, tc.path, tc.body)
		if code != tc.code || errField(body) != tc.field {
			t.Errorf("%s: %d field %q (%v), want %d field %q", tc.name, code, errField(body), body, tc.code, tc.field)
		}
	}
	// The messages name what was sent: a string k is a string, and k's range says what 0 means.
	for body, want := range map[string]string{
		`{"query": "weather", "k": "3"}`: `string "3"`,
		`{"query": "weather", "k": -1}`:  "(0: the server's",
	} {
		if _, got := c.do("POST", "/v1/select", body); !strings.Contains(fmt.Sprint(got), want) {
			t.Errorf("%s: %v, want a message containing %q", body, got, want)
		}
	}
}

func TestTokenAndRateLimit(t *testing.T) {
	r := newRouter(t)
	ts := httptest.NewServer(serve.New(r, serve.Options{Token: "s3cret", RateLimit: 1, RateBurst: 2}).Handler())
	defer ts.Close()
	anon := client{t: t, base: ts.URL}
	if code, body := anon.do("POST", "/v1/select", `{"query": "weather"}`); code != 401 || errField(body) != "Authorization" {
		t.Fatalf("no token: %d %v", code, body)
	}
	wrong := client{t: t, base: ts.URL, token: "guess"}
	if code, _ := wrong.do("POST", "/v1/select", `{"query": "weather"}`); code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	if code, _ := anon.do("GET", "/healthz", ""); code != 200 {
		t.Fatalf("healthz needs no token: %d", code)
	}
	ok := client{t: t, base: ts.URL, token: "s3cret"}
	codes := []int{}
	for range 4 {
		code, _ := ok.do("POST", "/v1/select", `{"query": "weather"}`)
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[200 200 429 429]" {
		t.Fatalf("burst of 2 at 1/s: %v", codes)
	}
}

// TestOpenAPIDescribesTheServer keeps openapi.yaml honest: every route the server answers is
// documented, the response schemas list exactly the JSON fields of the types served, and
// /v1/openapi.yaml serves the document.
func TestOpenAPIDescribesTheServer(t *testing.T) {
	var doc struct {
		OpenAPI string                               `yaml:"openapi"`
		Paths   map[string]map[string]any            `yaml:"paths"`
		Comp    struct{ Schemas map[string]yamlObj } `yaml:"components"`
	}
	if err := yaml.Unmarshal(serve.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	routes := map[string][]string{
		"/v1/select": {"post"}, "/v1/feedback": {"post"}, "/v1/tools": {"get"},
		"/v1/tools/{id}": {"delete", "get", "put"}, "/healthz": {"get"}, "/metrics": {"get"}, "/v1/openapi.yaml": {"get"},
		"/v1/state": {"get"},
	}
	for path, methods := range routes {
		var got []string
		for m := range doc.Paths[path] {
			if m != "parameters" {
				got = append(got, m)
			}
		}
		sort.Strings(got)
		if fmt.Sprint(got) != fmt.Sprint(methods) {
			t.Errorf("%s: documented %v, served %v", path, got, methods)
		}
	}
	check := func(schema string, v any) {
		var fields []string
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			fields = append(fields, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		var doc2 []string
		for k := range doc.Comp.Schemas[schema].Properties {
			doc2 = append(doc2, k)
		}
		sort.Strings(fields)
		sort.Strings(doc2)
		if fmt.Sprint(fields) != fmt.Sprint(doc2) {
			t.Errorf("schema %s documents %v, the server reads %v", schema, doc2, fields)
		}
	}
	check("SelectResponse", serve.SelectResponse{})
	check("State", serve.StateResponse{})
	check("RankedTool", serve.RankedTool{})
	check("Tool", catalog.Tool{})
	// The request schemas are checked against the handlers' own structs in
	// TestOpenAPIRequestSchemasAreTheHandlersStructs (package serve). The served document is
	// the embedded one:
	resp := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/v1/openapi.yaml", nil)
	serve.New(newRouter(t), serve.Options{}).Handler().ServeHTTP(resp, req)
	if resp.Code != 200 || !bytes.Equal(resp.Body.Bytes(), serve.OpenAPI) {
		t.Fatalf("/v1/openapi.yaml: %d", resp.Code)
	}
}

type yamlObj struct {
	Properties map[string]any `yaml:"properties"`
}

func fuzzHandler(f *testing.F, method, path string, seeds ...string) {
	r := newRouter(f)
	h := serve.New(r, serve.Options{MaxBodyBytes: 8192}).Handler()
	sel, err := r.Select(context.Background(), "send an email", router.SelectOptions{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(strings.ReplaceAll(strings.ReplaceAll(s, "DECISION", sel.DecisionID), "TOOL", sel.Tools[0].ID))
	}
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q: %d %s", method, path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			var e struct {
				Error struct{ Code, Field, Message string }
			}
			if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
				t.Fatalf("%s %s %q: %d without a JSON error: %s", method, path, body, rec.Code, rec.Body)
			}
		}
	})
}

func FuzzSelectHandler(f *testing.F) {
	fuzzHandler(f, "POST", "/v1/select", `{"query": "weather in Paris", "k": 3}`, `{"query": "x", "exclude": ["TOOL"]}`,
		`{"query": 1e999}`, `{"query": "\u00ff\ud800"}`, `{}`, `null`, `{"k": -1, "query": "a"}`)
}

func FuzzFeedbackHandler(f *testing.F) {
	fuzzHandler(f, "POST", "/v1/feedback", `{"decision_id": "DECISION", "tool": "TOOL", "executed": true, "latency_ms": 12}`,
		`{"decision_id": "DECISION", "tool": "TOOL", "executed": false, "task_success": false}`,
		`{"decision_id": "DECISION", "tool": "TOOL", "executed": true, "latency_ms": -0}`, `{"executed": null}`)
}

func FuzzPutToolHandler(f *testing.F) {
	fuzzHandler(f, "PUT", "/v1/tools/x/y/z", `{"name": "z", "platform": "other", "description": "Sends a fax."}`,
		`{"id": "x/y/z", "name": "z", "platform": "n8n", "endpoints": [{"url": "https://{a}.example.com"}], "tags": ["a"]}`,
		`{"name": "z", "platform": "other", "probe": {"status": "broken", "latency_ms": 5, "checked_at": "2026-01-01T00:00:00Z"}}`)
}

// TestDiskFullIs503: on a full file system feedback is answered 503 storage_full naming the
// cause, /healthz turns degraded, selections still work, and feedback recovers once space is
// freed.
func TestDiskFullIs503(t *testing.T) {
	dir := testfs.Tmpfs(t, 8<<20)
	store, err := state.OpenBolt(filepath.Join(dir, "state"), state.BoltOptions{})
	if err != nil {
		t.Fatal(err)
	}
	newRouter(t) // the fixture
	front, _ := router.NewLexicalFrontend(64)
	r, err := router.New(context.Background(), router.Config{Frontend: front, Tools: fixture.tools, Calibrator: fixture.cal, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ts := httptest.NewServer(serve.New(r, serve.Options{}).Handler())
	defer ts.Close()
	c := client{t: t, base: ts.URL}
	filler := testfs.Fill(t, dir, 64<<10)
	var code int
	var body map[string]any
	for i := 0; i < 5000; i++ {
		_, sel := c.do("POST", "/v1/select", `{"query": "send an email"}`)
		fb := fmt.Sprintf(`{"decision_id": %q, "tool": %q, "executed": true}`, sel["decision_id"], sel["tools"].([]any)[0].(map[string]any)["id"])
		if code, body = c.do("POST", "/v1/feedback", fb); code != 200 {
			break
		}
	}
	e, _ := body["error"].(map[string]any)
	if code != 503 || e["code"] != "storage_full" || !strings.Contains(e["message"].(string), "no space left on device") {
		t.Fatalf("feedback on a full disk: %d %v", code, body)
	}
	if code, h := c.do("GET", "/healthz", ""); code != 503 || h["status"] != "degraded" {
		t.Fatalf("healthz on a full disk: %d %v", code, h)
	}
	if code, _ := c.do("POST", "/v1/select", `{"query": "send an email"}`); code != 200 {
		t.Fatalf("select on a full disk: %d", code)
	}
	os.Remove(filler)
	_, sel := c.do("POST", "/v1/select", `{"query": "send an email"}`)
	fb := fmt.Sprintf(`{"decision_id": %q, "tool": %q, "executed": true}`, sel["decision_id"], sel["tools"].([]any)[0].(map[string]any)["id"])
	if code, body := c.do("POST", "/v1/feedback", fb); code != 200 {
		t.Fatalf("feedback after freeing space: %d %v", code, body)
	}
	if code, h := c.do("GET", "/healthz", ""); code != 200 || h["status"] != "ok" {
		t.Fatalf("healthz after recovery: %d %v", code, h)
	}
}
