package crawl

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// n8nNode is the part of a node description in dist/types/nodes.json that the crawler reads.
type n8nNode struct {
	DisplayName     string          `json:"displayName"`
	Name            string          `json:"name"`
	Group           []string        `json:"group"`
	Version         json.RawMessage `json:"version"`
	DefaultVersion  float64         `json:"defaultVersion"`
	Description     string          `json:"description"`
	Hidden          bool            `json:"hidden"`
	Credentials     []n8nCredRef    `json:"credentials"`
	Properties      []n8nProp       `json:"properties"`
	RequestDefaults struct {
		BaseURL string `json:"baseURL"`
	} `json:"requestDefaults"`
	Codex   json.RawMessage `json:"codex"`
	IconURL json.RawMessage `json:"iconUrl"`
}

// codexTags returns the categories and subcategories of a node's codex, tolerating the shapes
// seen in the wild (a map of lists, or a list).
func (n *n8nNode) codexTags() []string {
	var c struct {
		Categories    []string        `json:"categories"`
		Subcategories json.RawMessage `json:"subcategories"`
	}
	if len(n.Codex) == 0 || json.Unmarshal(n.Codex, &c) != nil {
		return nil
	}
	tags := append([]string{}, c.Categories...)
	var byCat map[string][]string
	var list []string
	if json.Unmarshal(c.Subcategories, &byCat) == nil {
		for _, k := range sortedKeys(byCat) {
			tags = append(tags, byCat[k]...)
		}
	} else if json.Unmarshal(c.Subcategories, &list) == nil {
		tags = append(tags, list...)
	}
	return tags
}

// n8nCredRef is a credential a node uses.
type n8nCredRef struct {
	Name           string          `json:"name"`
	Required       bool            `json:"required"`
	DisplayOptions *n8nDisplayOpts `json:"displayOptions"`
}

// n8nDisplayOpts are the conditions under which a property is shown.
type n8nDisplayOpts struct {
	Show map[string][]json.RawMessage `json:"show"`
	Hide map[string][]json.RawMessage `json:"hide"`
}

// n8nProp is a node parameter.
type n8nProp struct {
	DisplayName    string            `json:"displayName"`
	Name           string            `json:"name"`
	Type           string            `json:"type"`
	Description    string            `json:"description"`
	Required       bool              `json:"required"`
	Default        json.RawMessage   `json:"default"`
	Options        []json.RawMessage `json:"options"`
	DisplayOptions *n8nDisplayOpts   `json:"displayOptions"`
}

// n8nOption is one choice of an options-typed parameter (a resource or an operation).
type n8nOption struct {
	Name        string          `json:"name"`
	Value       json.RawMessage `json:"value"`
	Description string          `json:"description"`
	Action      string          `json:"action"`
}

// n8nCredential is one entry of dist/types/credentials.json.
type n8nCredential struct {
	Name        string    `json:"name"`
	DisplayName string    `json:"displayName"`
	Extends     []string  `json:"extends"`
	Properties  []n8nProp `json:"properties"`
	Test        struct {
		Request struct {
			BaseURL string `json:"baseURL"`
			URL     string `json:"url"`
		} `json:"request"`
	} `json:"test"`
}

// versions returns the version numbers a node entry covers.
func (n *n8nNode) versions() []float64 {
	var one float64
	if json.Unmarshal(n.Version, &one) == nil {
		return []float64{one}
	}
	var many []float64
	_ = json.Unmarshal(n.Version, &many)
	return many
}

// latest is the version the crawler describes: the default version if the entry covers it, else
// the highest version of the entry.
func (n *n8nNode) latest() float64 {
	vs := n.versions()
	best := 0.0
	for _, v := range vs {
		if v == n.DefaultVersion {
			return v
		}
		if v > best {
			best = v
		}
	}
	return best
}

// optionValue renders an option's value (string, number or bool) as text.
func optionValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

// versionMatches evaluates one @version condition: a number or {"_cnd": {"gte": 1.1}}.
func versionMatches(cond json.RawMessage, v float64) bool {
	var num float64
	if json.Unmarshal(cond, &num) == nil {
		return num == v
	}
	var c struct {
		Cnd map[string]json.RawMessage `json:"_cnd"`
	}
	if json.Unmarshal(cond, &c) != nil || c.Cnd == nil {
		return false
	}
	for op, raw := range c.Cnd {
		var x float64
		if op == "between" {
			var b struct{ From, To float64 }
			if json.Unmarshal(raw, &b) != nil || v < b.From || v > b.To {
				return false
			}
			continue
		}
		if json.Unmarshal(raw, &x) != nil {
			return false
		}
		ok := map[string]bool{"eq": v == x, "not": v != x, "gte": v >= x, "lte": v <= x, "gt": v > x, "lt": v < x}[op]
		if !ok {
			return false
		}
	}
	return true
}

// n8nCtx is the situation a property's display options are evaluated in.
type n8nCtx struct {
	version             float64
	resource, operation string
	hasResource         bool
	hasOperation        bool
}

// matchList reports whether any condition of a show/hide list matches value.
func matchList(conds []json.RawMessage, value string) bool {
	for _, c := range conds {
		if optionValue(c) == value {
			return true
		}
	}
	return false
}

// visible evaluates display options for the keys the crawler knows (@version, resource,
// operation); conditions on other parameters are treated as satisfiable.
func (d *n8nDisplayOpts) visible(ctx n8nCtx) bool {
	if d == nil {
		return true
	}
	for key, conds := range d.Show {
		switch key {
		case "@version":
			ok := false
			for _, c := range conds {
				if versionMatches(c, ctx.version) {
					ok = true
				}
			}
			if !ok {
				return false
			}
		case "resource":
			if ctx.hasResource && !matchList(conds, ctx.resource) {
				return false
			}
		case "operation":
			if ctx.hasOperation && !matchList(conds, ctx.operation) {
				return false
			}
		}
	}
	for key, conds := range d.Hide {
		switch key {
		case "@version":
			for _, c := range conds {
				if versionMatches(c, ctx.version) {
					return false
				}
			}
		case "resource":
			if ctx.hasResource && matchList(conds, ctx.resource) {
				return false
			}
		case "operation":
			if ctx.hasOperation && matchList(conds, ctx.operation) {
				return false
			}
		}
	}
	return true
}

// n8nExpr matches an n8n expression {{ ... }} or a JS template ${...}.
var n8nExpr = regexp.MustCompile(`\{\{\s*([^}]*?)\s*\}\}|\$\{([^}]*)\}`)

// n8nURL turns an n8n URL value (possibly an "=" expression) into an endpoint; expressions
// become {placeholders} and mark the endpoint templated when they sit in the host.
func n8nURL(raw string) (catalog.Endpoint, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return catalog.Endpoint{}, false
	}
	if strings.HasPrefix(s, "=") {
		s = strings.TrimSpace(s[1:])
	}
	s = n8nExpr.ReplaceAllStringFunc(s, func(m string) string {
		inner := strings.Trim(m, "{}$ ")
		inner = strings.TrimPrefix(inner, "$")
		inner = strings.Map(func(r rune) rune {
			if r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, inner)
		if inner == "" {
			inner = "expr"
		}
		return "{" + inner + "}"
	})
	if strings.HasPrefix(s, "{") {
		// The whole base URL comes from a credential field: unknown host.
		return catalog.Endpoint{URL: s, Templated: true}, true
	}
	return endpointFromURL(s)
}

// backtickURL is a JS template literal holding a URL, as the branches of a conditional
// expression give them.
var backtickURL = regexp.MustCompile("`([^`]*://[^`]*)`")

// n8nURLs is n8nURL of an n8n URL value, or of each URL branch of a conditional expression
// ({{$credentials.region.startsWith("cn-") ? `https://…cn` : `https://…`}}), which n8nURL would
// keep whole as an endpoint with the expression for its host.
func n8nURLs(raw string) []catalog.Endpoint {
	if strings.Contains(raw, "`") || strings.Contains(raw, "?") && strings.Contains(raw, "{{") && strings.Contains(raw, " : ") {
		var out []catalog.Endpoint
		for _, m := range backtickURL.FindAllStringSubmatch(raw, -1) {
			if ep, ok := n8nURL(m[1]); ok {
				out = append(out, ep)
			}
		}
		return out // no URL literal in it: a computed URL, no endpoint
	}
	if ep, ok := n8nURL(raw); ok {
		return []catalog.Endpoint{ep}
	}
	return nil
}

// credentialIndex maps credential names to their parsed records.
type credentialIndex map[string]*n8nCredential

func (ci credentialIndex) endpoints(name string, depth int) []catalog.Endpoint {
	c := ci[name]
	if c == nil || depth > 5 {
		return nil
	}
	var out []catalog.Endpoint
	if b := c.Test.Request.BaseURL; b != "" {
		out = append(out, n8nURLs(b)...)
	} else if u := c.Test.Request.URL; u != "" {
		out = append(out, n8nURLs(u)...)
	}
	for _, p := range c.Properties {
		ln := strings.ToLower(p.Name)
		if ln == "authurl" || ln == "accesstokenurl" || strings.Contains(ln, "oauth") {
			continue
		}
		if !(strings.Contains(ln, "url") || strings.Contains(ln, "host") || strings.Contains(ln, "domain") ||
			strings.Contains(ln, "server") || strings.Contains(ln, "endpoint")) {
			continue
		}
		var def string
		if json.Unmarshal(p.Default, &def) != nil {
			continue
		}
		if strings.HasPrefix(strings.TrimPrefix(def, "="), "http") {
			out = append(out, n8nURLs(def)...)
		}
	}
	for _, parent := range c.Extends {
		if parent != "oAuth2Api" && parent != "oAuth1Api" {
			out = append(out, ci.endpoints(parent, depth+1)...)
		}
	}
	return out
}

func (ci credentialIndex) kind(name string) string {
	c := ci[name]
	if c == nil {
		return "credential"
	}
	for _, e := range c.Extends {
		if e == "oAuth2Api" || e == "oAuth1Api" || strings.Contains(strings.ToLower(e), "oauth") {
			return "oauth2"
		}
	}
	if strings.Contains(strings.ToLower(name), "oauth2") {
		return "oauth2"
	}
	return "credential"
}

// packageJSON reads name and version from the shortest package.json of a tree.
func packageJSON(t *Tree) (name, version string) {
	best := ""
	for _, p := range t.Find("package.json") {
		if strings.Contains(p, "node_modules/") {
			continue
		}
		if best == "" || strings.Count(p, "/") < strings.Count(best, "/") {
			best = p
		}
	}
	if best == "" {
		return "", ""
	}
	var pj struct{ Name, Version string }
	_ = json.Unmarshal(t.Files[best], &pj)
	return pj.Name, pj.Version
}

// CrawlN8n reads the node catalog of n8n packages (n8n-nodes-base, @n8n/n8n-nodes-langchain):
// dist/types/nodes.json and credentials.json. Each node × (resource, operation) of the node's
// current version is one tool; a node without operations is one tool; trigger and hidden nodes
// are not callable tools and are left out.
func CrawlN8n(trees []*Tree) (*PlatformResult, error) {
	res := &PlatformResult{Platform: catalog.PlatformN8n}
	warn := func(s string) { res.Warnings = append(res.Warnings, s) }
	var tools []catalog.Tool
	for _, t := range trees {
		res.Warnings = append(res.Warnings, t.Warnings...)
		pkg, version := packageJSON(t)
		nodesPaths := t.Find("dist/types/nodes.json")
		for _, p := range sortedKeys(t.Skipped) {
			if len(nodesPaths) == 0 && (p == "dist/types/nodes.json" || strings.HasSuffix(p, "/dist/types/nodes.json")) {
				return nil, fmt.Errorf("crawl n8n %s: %s was skipped: %s", t.Label, p, t.Skipped[p])
			}
		}
		if len(nodesPaths) == 0 {
			return nil, fmt.Errorf("crawl n8n %s: no dist/types/nodes.json: give the published npm package "+
				"(npm pack n8n-nodes-base) or a built package directory (pnpm build writes dist/types)", t.Label)
		}
		nodesPath := nodesPaths[0]
		if pkg == "" {
			pkg = path.Base(strings.TrimSuffix(nodesPath, "/dist/types/nodes.json"))
		}
		res.Sources = append(res.Sources, SourceInfo{Package: pkg, Version: version, Path: t.Label})
		var rawNodes []json.RawMessage
		if err := json.Unmarshal(t.Files[nodesPath], &rawNodes); err != nil {
			return nil, fmt.Errorf("crawl n8n %s: %s: %w", t.Label, nodesPath, err)
		}
		nodes := make([]n8nNode, 0, len(rawNodes))
		for i, raw := range rawNodes {
			var n n8nNode
			if err := json.Unmarshal(raw, &n); err != nil || n.Name == "" {
				warn(fmt.Sprintf("%s: %s: node %d skipped: %v", t.Label, nodesPath, i, err))
				continue
			}
			nodes = append(nodes, n)
		}
		creds := credentialIndex{}
		credPath := strings.TrimSuffix(nodesPath, "nodes.json") + "credentials.json"
		if data, ok := t.Files[credPath]; ok {
			var cl []n8nCredential
			if err := json.Unmarshal(data, &cl); err != nil {
				warn(fmt.Sprintf("%s: %s: %v (credentials ignored)", t.Label, credPath, err))
			}
			for i := range cl {
				creds[cl[i].Name] = &cl[i]
			}
		} else {
			warn(fmt.Sprintf("%s: no %s: credential endpoints unknown", t.Label, credPath))
		}
		// Keep one entry per node name: the one covering the node's current version.
		current := map[string]*n8nNode{}
		var order []string
		for i := range nodes {
			n := &nodes[i]
			prev, ok := current[n.Name]
			if !ok {
				order = append(order, n.Name)
				current[n.Name] = n
				continue
			}
			if n.latest() > prev.latest() {
				current[n.Name] = n
			}
		}
		sort.Strings(order)
		code := newNodeCodeIndex(t, nodesPath)
		for _, name := range order {
			tools = append(tools, n8nNodeTools(current[name], pkg, version, nodesPath, creds, code)...)
		}
	}
	res.Tools, res.Duplicates = dedupeTools(tools, warn)
	return res, nil
}

func isTrigger(n *n8nNode) bool {
	for _, g := range n.Group {
		if g == "trigger" {
			return true
		}
	}
	return strings.HasSuffix(n.Name, "Trigger")
}

// n8nNodeTools expands one node into its (resource, operation) tools.
func n8nNodeTools(n *n8nNode, pkg, version, srcFile string, creds credentialIndex, code *nodeCodeIndex) []catalog.Tool {
	if n.Hidden || isTrigger(n) {
		return nil
	}
	v := n.latest()
	base := n8nCtx{version: v}
	type choice struct{ value, name, desc, action string }
	optionsOf := func(p *n8nProp) []choice {
		var out []choice
		for _, raw := range p.Options {
			var o n8nOption
			if json.Unmarshal(raw, &o) != nil || len(o.Value) == 0 {
				continue
			}
			out = append(out, choice{optionValue(o.Value), o.Name, o.Description, o.Action})
		}
		return out
	}
	var resources []choice
	for i := range n.Properties {
		p := &n.Properties[i]
		if p.Name == "resource" && p.Type == "options" && p.DisplayOptions.visible(base) {
			resources = append(resources, optionsOf(p)...)
		}
	}
	hasResource := len(resources) > 0
	if !hasResource {
		resources = []choice{{}}
	}
	tags := n.codexTags()
	var tools []catalog.Tool
	seenOp := map[string]bool{}
	for _, r := range resources {
		ctx := n8nCtx{version: v, resource: r.value, hasResource: hasResource}
		for i := range n.Properties {
			p := &n.Properties[i]
			if p.Name != "operation" || p.Type != "options" || !p.DisplayOptions.visible(ctx) {
				continue
			}
			for _, op := range optionsOf(p) {
				fn := op.value
				if hasResource {
					fn = r.value + "." + op.value
				}
				if seenOp[fn] {
					continue
				}
				seenOp[fn] = true
				opCtx := ctx
				opCtx.operation, opCtx.hasOperation = op.value, true
				title := op.action
				if title == "" {
					title = strings.TrimSpace(op.name + " " + r.name)
				}
				desc := op.desc
				if desc == "" {
					desc = op.action
				}
				if desc == "" {
					desc = title
				}
				if n.Description != "" {
					desc = strings.TrimSuffix(desc, ".") + ". " + n.Description
				}
				t := n8nTool(n, pkg, version, srcFile, creds, code, opCtx, fn, n.DisplayName+": "+title, desc)
				t.Tags = uniqueStrings(append(append([]string{}, tags...), r.name))
				tools = append(tools, t)
			}
		}
	}
	if len(tools) == 0 {
		t := n8nTool(n, pkg, version, srcFile, creds, code, base, "", n.DisplayName, n.Description)
		t.Tags = uniqueStrings(tags)
		tools = append(tools, t)
	}
	return tools
}

func n8nTool(n *n8nNode, pkg, version, srcFile string, creds credentialIndex, code *nodeCodeIndex, ctx n8nCtx, fn, name, desc string) catalog.Tool {
	idName := fn
	if idName == "" {
		idName = n.Name
	}
	t := catalog.Tool{
		ID:          catalog.MakeID(catalog.PlatformN8n, n.Name, idName),
		Name:        name,
		Description: collapseSpace(desc),
		Platform:    catalog.PlatformN8n,
		Package:     pkg,
		Version:     version,
		SourceFile:  srcFile + "#" + n.Name + "@" + strconv.FormatFloat(ctx.version, 'f', -1, 64),
		Function:    fn,
	}
	var eps []catalog.Endpoint
	if n.RequestDefaults.BaseURL != "" {
		eps = append(eps, n8nURLs(n.RequestDefaults.BaseURL)...)
	}
	var auth []catalog.Credential
	for _, c := range n.Credentials {
		if !c.DisplayOptions.visible(ctx) {
			continue
		}
		auth = append(auth, catalog.Credential{Name: c.Name, Kind: creds.kind(c.Name), Required: c.Required})
		eps = append(eps, creds.endpoints(c.Name, 0)...)
	}
	eps = append(eps, code.endpoints(nodeDir(n.IconURL))...)
	t.Endpoints = dedupeEndpoints(eps)
	t.Auth = dedupeCredentials(auth)
	if fn != "" {
		for i := range n.Properties {
			p := &n.Properties[i]
			if p.Name == "resource" || p.Name == "operation" || p.Type == "notice" || p.Type == "hidden" ||
				p.DisplayOptions == nil || !p.DisplayOptions.visible(ctx) {
				continue
			}
			// Only parameters tied to this operation (shown for it explicitly).
			if _, ok := p.DisplayOptions.Show["operation"]; !ok {
				continue
			}
			d := p.Description
			if d == "" {
				d = p.DisplayName
			}
			t.Parameters = append(t.Parameters, catalog.Parameter{Name: p.Name, Type: p.Type, Description: collapseSpace(d), Required: p.Required})
		}
		t.Parameters = dedupeParams(t.Parameters)
	}
	return t
}

func dedupeParams(ps []catalog.Parameter) []catalog.Parameter {
	seen := map[string]bool{}
	var out []catalog.Parameter
	for _, p := range ps {
		if !seen[p.Name] {
			seen[p.Name] = true
			out = append(out, p)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
