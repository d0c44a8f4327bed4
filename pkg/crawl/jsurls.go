package crawl

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// jsAPIPath says whether a plain URL literal looks like an API base rather than a web page:
// an api.* host or an /api or /vN path segment.
var jsAPIPath = regexp.MustCompile(`^https?://(api[.-][^/]+|[^/]*\.api\.[^/]+|[^/]+/(.*/)?(api|v[0-9]+(\.[0-9]+)?)(/|$))`)

// jsEndpoints extracts request URLs from compiled n8n node code, read as text: template literals
// building a URL (`https://api.x.com/v1${endpoint}`: the way nodes call their API) and quoted
// URL literals that look like API bases. Regular expressions and web-page links are left out.
func jsEndpoints(src []byte) []catalog.Endpoint {
	var templ, plain []catalog.Endpoint
	s := string(src)
	for i := 0; ; {
		j := strings.Index(s[i:], "http")
		if j < 0 {
			break
		}
		j += i
		i = j + 4
		if j == 0 || !(strings.HasPrefix(s[j:], "https://") || strings.HasPrefix(s[j:], "http://")) {
			continue
		}
		q := s[j-1]
		if q != '`' && q != '\'' && q != '"' {
			continue
		}
		k := strings.IndexByte(s[j:], q)
		if k < 0 {
			break
		}
		lit := s[j : j+k]
		i = j + k + 1
		if strings.ContainsAny(lit, " \t\n\\[]()*|^") {
			continue // prose, or a regular expression
		}
		if q == '`' {
			u := strings.ReplaceAll(lit, "${", "{")
			if !strings.Contains(lit, "${") && !jsAPIPath.MatchString(u) {
				continue
			}
			if ep, ok := endpointFromURL(u); ok {
				templ = append(templ, ep)
			}
			continue
		}
		if strings.ContainsAny(lit, "{}$") || !jsAPIPath.MatchString(lit) {
			continue
		}
		if ep, ok := endpointFromURL(lit); ok {
			plain = append(plain, ep)
		}
	}
	return append(templ, plain...)
}

// nodeCodeIndex finds the compiled code of an n8n node through its icon path
// (icons/<package>/dist/nodes/<Dir>/<icon>.svg -> <root>dist/nodes/<Dir>/) and caches the
// endpoints found in each directory.
type nodeCodeIndex struct {
	root  string   // path prefix of the package inside the tree ("package/")
	js    []string // sorted .js paths
	files map[string][]byte
	cache map[string][]catalog.Endpoint
}

func newNodeCodeIndex(t *Tree, nodesPath string) *nodeCodeIndex {
	ix := &nodeCodeIndex{root: strings.TrimSuffix(nodesPath, "dist/types/nodes.json"), files: t.Files, cache: map[string][]catalog.Endpoint{}}
	for _, p := range t.Paths() {
		if strings.HasSuffix(p, ".js") && strings.HasPrefix(p, ix.root+"dist/nodes/") && !testCode(p) {
			ix.js = append(ix.js, p)
		}
	}
	return ix
}

// testCode reports whether a compiled file is a node's tests or their fixtures (__tests__,
// __mocks__, test or tests directories): their URLs are mocked API responses, not endpoints the
// node calls (Spotify's fixtures gave each of its tools 26 album and track URLs).
func testCode(p string) bool {
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "__tests__", "__mocks__", "test", "tests", "__fixtures__", "fixtures":
			return true
		}
	}
	return strings.HasSuffix(p, ".test.js") || strings.HasSuffix(p, ".spec.js")
}

// nodeDir returns the directory of a node's code from its iconUrl (a string or {light, dark}).
func nodeDir(iconURL json.RawMessage) string {
	var s string
	if json.Unmarshal(iconURL, &s) != nil {
		var both struct{ Light string }
		if json.Unmarshal(iconURL, &both) != nil {
			return ""
		}
		s = both.Light
	}
	i := strings.Index(s, "dist/nodes/")
	j := strings.LastIndex(s, "/")
	if i < 0 || j <= i+len("dist/nodes") {
		return ""
	}
	return s[i : j+1]
}

// endpoints returns the endpoints found in the code under dir (relative to the package root).
func (ix *nodeCodeIndex) endpoints(dir string) []catalog.Endpoint {
	if dir == "" {
		return nil
	}
	if eps, ok := ix.cache[dir]; ok {
		return eps
	}
	prefix := ix.root + dir
	var eps []catalog.Endpoint
	for i := sort.SearchStrings(ix.js, prefix); i < len(ix.js) && strings.HasPrefix(ix.js[i], prefix); i++ {
		eps = append(eps, jsEndpoints(ix.files[ix.js[i]])...)
	}
	eps = dedupeEndpoints(eps)
	ix.cache[dir] = eps
	return eps
}
