package serve_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rated-dev/rated/pkg/serve"
)

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// JSON keys must match the documented fields exactly (openapi.yaml: additionalProperties
// false): encoding/json alone would take "Query" for "query" and the last of duplicate keys.
func TestJSONKeysAreMatchedExactly(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{}).Handler())
	defer ts.Close()
	c := client{t: t, base: ts.URL}
	for _, tc := range []struct {
		name, method, path, body string
		code, field              string
	}{
		{"capitalised key", "POST", "/v1/select", `{"Query": "weather"}`, "unknown_field", "Query"},
		{"upper-case key", "POST", "/v1/select", `{"query": "weather", "K": 2}`, "unknown_field", "K"},
		{"duplicate key", "POST", "/v1/select", `{"query": "weather", "query": "email"}`, "duplicate_field", "query"},
		{"feedback capitalised", "POST", "/v1/feedback", `{"Decision_ID": "x", "tool": "y", "executed": true}`, "unknown_field", "Decision_ID"},
		{"feedback duplicate", "POST", "/v1/feedback", `{"decision_id": "x", "tool": "y", "executed": true, "executed": false}`, "duplicate_field", "executed"},
		{"nested key", "PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "endpoints": [{"URL": "https://x.test"}]}`, "unknown_field", "endpoints[0].URL"},
		{"nested duplicate", "PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "endpoints": [{"url": "https://x.test", "url": "https://y.test"}]}`, "duplicate_field", "endpoints[0].url"},
		// A body of nothing but brackets is refused at 64 levels, however long it is (the key
		// check once recursed and built a path per level: 100,000 of them took 24 GB).
		{"deep nesting", "POST", "/v1/select", strings.Repeat("[", 200_000), "invalid_json", "body"},
		{"deep nesting in a field", "POST", "/v1/feedback", `{"decision_id": ` + strings.Repeat(`{"a":`, 100), "invalid_json", "body"},
		{"invalid UTF-8", "POST", "/v1/select", "{\"query\": \"a\xff\xfeb\"}", "invalid_json", "body"},
		// An unreadable array element: the key check looped for ever (found by FuzzSelectHandler).
		{"unreadable element", "POST", "/v1/select", "[0\x16", "invalid_json", "body"},
		{"unreadable value in an object", "POST", "/v1/feedback", "{\"decision_id\": [1, \x01", "invalid_json", "body"},
		// Ids a catalog file may not hold may not come in through the API either.
		{"id with a space", "PUT", "/v1/tools/a%20b", `{"name": "x", "platform": "other"}`, "invalid_field", "id"},
		{"id with a dot-dot segment", "PUT", "/v1/tools/x%2F..%2Fc", `{"name": "x", "platform": "other"}`, "invalid_field", "id"},
		{"id with a trailing slash", "PUT", "/v1/tools/trail/", `{"name": "x", "platform": "other"}`, "invalid_field", "id"},
	} {
		code, body := c.do(tc.method, tc.path, tc.body)
		if code != 400 || errCode(body) != tc.code || errField(body) != tc.field {
			t.Errorf("%s: %d %v, want 400 %s naming %q", tc.name, code, body, tc.code, tc.field)
		}
	}
	// The exact keys still work.
	if code, body := c.do("POST", "/v1/select", `{"query": "weather", "k": 2}`); code != 200 {
		t.Fatalf("select: %d %v", code, body)
	}
	if code, body := c.do("PUT", "/v1/tools/a/b", `{"name": "x", "platform": "other", "endpoints": [{"url": "https://x.test"}]}`); code != 201 {
		t.Fatalf("put: %d %v", code, body)
	}
}

// A known path asked with a method it does not take is 405 with the methods it takes in Allow
// (RFC 9110, section 15.5.6); an unknown path stays 404.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{}).Handler())
	defer ts.Close()
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/v1/select", 405, "POST"},
		{"PUT", "/v1/feedback", 405, "POST"},
		{"POST", "/v1/tools", 405, "GET, HEAD"},
		{"PATCH", "/v1/tools/a/b", 405, "GET, HEAD, PUT, DELETE"},
		{"POST", "/healthz", 405, "GET, HEAD"},
		{"DELETE", "/metrics", 405, "GET, HEAD"},
		{"GET", "/v2/nothing", 404, ""},
		{"POST", "/", 404, ""},
	} {
		req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(""))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code || resp.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q, want %d Allow %q", tc.method, tc.path, resp.StatusCode, resp.Header.Get("Allow"), tc.code, tc.allow)
		}
	}
}

// The authentication scheme is case-insensitive (RFC 9110, section 11.1); the token is not.
func TestBearerSchemeIsCaseInsensitive(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{Token: "s3cret"}).Handler())
	defer ts.Close()
	for _, tc := range []struct {
		header string
		code   int
	}{
		{"Bearer s3cret", 200},
		{"bearer s3cret", 200},
		{"BEARER s3cret", 200},
		{"Bearer S3CRET", 401},
		{"Basic s3cret", 401},
		{"s3cret", 401},
		{"Bearer", 401},
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/select", strings.NewReader(`{"query": "weather"}`))
		req.Header.Set("Authorization", tc.header)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("Authorization %q: %d, want %d", tc.header, resp.StatusCode, tc.code)
		}
	}
}

// A web page must not reach the API: a state-changing request a browser marks as cross-site
// (Origin, Sec-Fetch-Site) is 403, and so is one that reached this loopback listener under a
// name that is not loopback (DNS rebinding: the page's own name resolved to 127.0.0.1, where
// Origin and Host agree). Requests from outside a browser carry neither header and pass, under
// any loopback name. The same holds on /mcp, answered as a JSON-RPC error.
func TestBrowsersFromOtherSitesAreRefused(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{MCP: true, AllowedHosts: []string{"API.example.org"}}).Handler())
	defer ts.Close()
	_, port, _ := strings.Cut(strings.TrimPrefix(ts.URL, "http://"), ":")
	body := `{"query": "weather"}`
	for _, tc := range []struct {
		name, path, host string
		headers          map[string]string
		status           int
		code             string
	}{
		{"cross-site origin", "/v1/select", "", map[string]string{"Origin": "http://evil.example"}, 403, "cross_origin"},
		{"cross-site fetch", "/v1/select", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross_origin"},
		{"rebound name", "/v1/select", "evil.example:" + port, map[string]string{"Origin": "http://evil.example:" + port}, 403, "invalid_host"},
		{"rebound name, no origin", "/v1/select", "evil.example", nil, 403, "invalid_host"},
		{"same origin", "/v1/select", "", map[string]string{"Origin": ts.URL, "Sec-Fetch-Site": "same-origin"}, 200, ""},
		{"no browser", "/v1/select", "", nil, 200, ""},
		{"localhost", "/v1/select", "localhost:" + port, nil, 200, ""},
		{"IPv6 loopback name", "/v1/select", "[::1]:" + port, nil, 200, ""},
		{"mcp, rebound name", "/mcp", "evil.example", nil, 403, ""},
		{"a proxy's allowed name", "/v1/select", "api.example.org", nil, 200, ""},
	} {
		req, _ := http.NewRequest("POST", ts.URL+tc.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if tc.host != "" {
			req.Host = tc.host
		}
		for k, v := range tc.headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if resp.StatusCode != tc.status || (tc.code != "" && errCode(out) != tc.code) || (tc.path == "/mcp" && out["error"] == nil) {
			t.Errorf("%s: %d %v, want %d %s", tc.name, resp.StatusCode, out, tc.status, tc.code)
		}
	}
}

// TestIntegerFieldsTakeWholeFloats: k written as 2.0 or 2e0 (a client holding every number as a
// float) is the integer 2, as JSON Schema's integer; 2.5, a string and null-like junk stay a wrong
// type naming the field.
func TestIntegerFieldsTakeWholeFloats(t *testing.T) {
	ts := httptest.NewServer(serve.New(newRouter(t), serve.Options{}).Handler())
	defer ts.Close()
	c := client{t: t, base: ts.URL}
	for _, k := range []string{"2", "2.0", "2e0"} {
		code, body := c.do("POST", "/v1/select", `{"query": "send an email", "k": `+k+`}`)
		tools, _ := body["tools"].([]any)
		if code != 200 || len(tools) != 2 {
			t.Errorf("k %s: %d, %d tools, %v; want 200 with 2 tools", k, code, len(tools), body)
		}
	}
	for _, k := range []string{"2.5", `"2"`, "true", "1e12"} {
		if code, body := c.do("POST", "/v1/select", `{"query": "send an email", "k": `+k+`}`); code != 400 || errCode(body) != "wrong_type" || errField(body) != "k" {
			t.Errorf("k %s: %d %v, want 400 wrong_type naming k", k, code, body)
		}
	}
}
