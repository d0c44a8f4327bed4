package crawl

import (
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// PlatformResult is what crawling one platform produced.
type PlatformResult struct {
	Platform string
	// Sources lists the archives, trees or git revisions read, with package and version.
	Sources []SourceInfo
	Tools   []catalog.Tool
	// Warnings name each file skipped and each inconsistency found (never fatal).
	Warnings []string
	// Duplicates counts records dropped because another record had the same id.
	Duplicates int
}

// SourceInfo names one source read by a crawl.
type SourceInfo struct {
	Package string `json:"package"`
	Version string `json:"version,omitempty"`
	Path    string `json:"path"`
}

// urlPattern finds http(s) URLs inside a string literal.
var urlPattern = regexp.MustCompile(`^https?://[^\s"'<>\x60]+$`)

// nonEndpointHosts are hosts whose URLs are documentation, schemas or placeholders rather than
// services a tool calls.
var nonEndpointHosts = []string{"localhost", "127.0.0.1", "0.0.0.0", "example.com", "example.org", "example.net",
	"www.w3.org", "json-schema.org", "github.com", "pypi.org", "python.langchain.com", "docs.n8n.io", "n8n.io",
	"docs.llamaindex.ai", "docs.crewai.com", "www.python.org", "python.org", "readthedocs.io", "your-domain.com", "yourdomain.com", "myblog.com", "mydomain.com", "yoursite.com"}

// docHostPrefixes start host names of documentation sites.
var docHostPrefixes = []string{"docs.", "developers.", "developer.", "support.", "help.", "manual.", "learn.", "www.example."}

func isAlnumByte(c byte) bool { return isAlnum(c) }

// urlsIn returns the endpoints among string literals: literals that are a URL as a whole (after
// trimming), which keeps documentation links inside prose out. f-string placeholders or n8n
// expressions in the host mark the endpoint as templated.
func urlsIn(strs []string) []catalog.Endpoint {
	var out []catalog.Endpoint
	for _, s := range strs {
		s = strings.TrimSpace(s)
		if len(s) > 2048 || !urlPattern.MatchString(s) {
			continue
		}
		if ep, ok := endpointFromURL(s); ok {
			out = append(out, ep)
		}
	}
	return out
}

// endpointFromURL builds an endpoint from a URL (possibly holding {placeholders} or n8n
// {{ expressions }}); ok is false for non-endpoint hosts and malformed URLs.
func endpointFromURL(raw string) (catalog.Endpoint, bool) {
	raw = strings.TrimSpace(strings.TrimPrefix(raw, "="))
	rest, ok := strings.CutPrefix(raw, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "http://"); !ok {
			return catalog.Endpoint{}, false
		}
	}
	if strings.Contains(rest, "#") {
		return catalog.Endpoint{}, false // an anchor into a page: documentation, not a service
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#{"); i > 0 && rest[i] == '{' && strings.Contains(rest[:i], ".") && isAlnumByte(rest[i-1]) {
		// https://api.x.com{path}: a placeholder right after a complete host name is the path.
		host = rest[:i]
	} else if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		// A '/' inside a placeholder ({{ $credentials.url }}/x) must not end the host early.
		if j := strings.Index(rest, "{"); j >= 0 && j < i {
			if k := strings.Index(rest[j:], "}"); k >= 0 {
				if m := strings.IndexAny(rest[j+k:], "/?#"); m >= 0 {
					i = j + k + m
				} else {
					i = len(rest)
				}
			}
		}
		host = rest[:i]
	}
	templated := strings.ContainsAny(host, "{}$<%")
	if !templated {
		scheme, _, _ := strings.Cut(raw, "://")
		u, err := url.Parse(scheme + "://" + host)
		if err != nil || u.Hostname() == "" || !strings.Contains(u.Hostname(), ".") && u.Hostname() != "localhost" {
			return catalog.Endpoint{}, false
		}
		h := strings.ToLower(u.Hostname())
		for _, bad := range nonEndpointHosts {
			if h == bad || strings.HasSuffix(h, "."+bad) {
				return catalog.Endpoint{}, false
			}
		}
		for _, prefix := range docHostPrefixes {
			if strings.HasPrefix(h, prefix) {
				return catalog.Endpoint{}, false
			}
		}
	}
	return catalog.Endpoint{URL: raw, Templated: templated}, true
}

func dedupeEndpoints(eps []catalog.Endpoint) []catalog.Endpoint {
	seen := map[string]bool{}
	var out []catalog.Endpoint
	for _, e := range eps {
		if !seen[e.URL] {
			seen[e.URL] = true
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].URL < out[j].URL })
	return out
}

// dedupeCredentials merges credentials by name; required wins over optional.
func dedupeCredentials(cs []catalog.Credential) []catalog.Credential {
	idx := map[string]int{}
	var out []catalog.Credential
	for _, c := range cs {
		if i, ok := idx[c.Name]; ok {
			out[i].Required = out[i].Required || c.Required
			continue
		}
		idx[c.Name] = len(out)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// dedupeTools drops records whose id was already seen (keeping the first) and reports how many
// were dropped, with a warning for each whose text differs from the kept one.
func dedupeTools(tools []catalog.Tool, warn func(string)) ([]catalog.Tool, int) {
	seen := map[string]int{}
	out := tools[:0:0]
	dups := 0
	for _, t := range tools {
		if i, ok := seen[t.ID]; ok {
			dups++
			if out[i].Description != t.Description {
				warn("duplicate tool id " + t.ID + ": kept " + out[i].SourceFile + ", dropped " + t.SourceFile)
			}
			continue
		}
		seen[t.ID] = len(out)
		out = append(out, t)
	}
	return out, dups
}

// tagWords turns identifiers into tags: "google_calendar" -> "google calendar".
func tagWords(s string) string { return strings.Join(catalog.SplitIdentifierWords(s), " ") }

func uniqueStrings(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
