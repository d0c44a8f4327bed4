package crawl

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/rated-dev/rated/pkg/catalog"
)

// pyDistInfo reads the distribution name and version of a Python source: the wheel's
// *.dist-info/METADATA or the sdist's PKG-INFO.
func pyDistInfo(t *Tree) (name, version string) {
	best := ""
	for _, p := range t.Paths() {
		if (strings.HasSuffix(p, ".dist-info/METADATA") || path.Base(p) == "PKG-INFO") &&
			(best == "" || strings.Count(p, "/") < strings.Count(best, "/")) {
			best = p
		}
	}
	if best == "" {
		if t.Commit != "" {
			return "", "git:" + t.Commit[:min(12, len(t.Commit))]
		}
		return "", ""
	}
	for _, line := range strings.Split(string(t.Files[best]), "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Name: "); ok {
			name = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(line, "Version: "); ok {
			version = strings.TrimSpace(v)
		}
	}
	return name, version
}

// pyToolFields resolves the name and description of a tool class, recording runtime-only fields.
type pyToolText struct {
	Name, Description string
	RuntimeOnly       []string
}

func (ix *pyIndex) toolText(c *pyClass, descAttr string) (pyToolText, bool) {
	var out pyToolText
	name, nameRT, present := ix.stringAttr(c, "name")
	if !present {
		return out, false
	}
	if nameRT {
		out.RuntimeOnly = append(out.RuntimeOnly, "name")
		name = c.Name
	}
	if strings.TrimSpace(name) == "" {
		return out, false
	}
	out.Name = strings.TrimSpace(name)
	desc, descRT, dpresent := ix.stringAttr(c, descAttr)
	switch {
	case !dpresent || descRT:
		out.RuntimeOnly = append(out.RuntimeOnly, "description")
	default:
		out.Description = collapseSpace(dedent(desc))
	}
	return out, true
}

// groupOf returns the directory of a module below a prefix: for prefix "x.tools" and module
// "x.tools.jira.tool" it is "jira"; for "x.tools.ifttt" it is "ifttt".
func groupOf(mod, prefix string) string {
	rest := strings.TrimPrefix(mod, prefix+".")
	g, _, _ := strings.Cut(rest, ".")
	return g
}

// classFacts collects endpoints and credentials of a tool class. Endpoints are the URL-valued
// class attributes (base_url, search_url, ...; a subclass's value overrides its parent's) or,
// when the class has none, the URL literals of its related modules (module, ancestors, API
// wrappers). Credentials are the environment variables those modules read.
func (ix *pyIndex) classFacts(c *pyClass) ([]catalog.Endpoint, []catalog.Credential) {
	eps, creds := ix.moduleFacts(ix.relatedModules(c))
	var attrEPs []catalog.Endpoint
	seen := map[string]bool{}
	for _, k := range ix.mro(c) {
		for _, name := range sortedKeys(k.Attrs) {
			if seen[name] {
				continue
			}
			seen[name] = true
			if s, _, ok := ix.resolveString(k.Module, k.Attrs[name], 0); ok && strings.HasPrefix(s, "http") {
				attrEPs = append(attrEPs, urlsIn([]string{s})...)
			}
		}
	}
	if len(attrEPs) > 0 {
		eps = attrEPs
	}
	return dedupeEndpoints(eps), creds
}

// addPyTree indexes the Python package top of one source tree into ix and records the tree's
// warnings and its source (distribution name and version from its metadata, else defaultName) in
// res. It reports whether the tree held any module of top.
func addPyTree(res *PlatformResult, ix *pyIndex, t *Tree, top, defaultName string, warn func(string)) bool {
	res.Warnings = append(res.Warnings, t.Warnings...)
	name, version := pyDistInfo(t)
	if name == "" {
		name = defaultName
	}
	res.Sources = append(res.Sources, SourceInfo{Package: name, Version: version, Path: t.Label})
	before := len(ix.modules)
	ix.addTree(t, top, sourceRef{Package: name, Version: version, Label: t.Label}, nil, warn)
	return len(ix.modules) > before
}

// CrawlLangChain reads langchain-community: every BaseTool subclass under
// langchain_community/tools/ with a static name, and every operation a toolkit under
// langchain_community/agent_toolkits/ lists as {"mode", "name", "description"}.
func CrawlLangChain(trees []*Tree) (*PlatformResult, error) {
	const top = "langchain_community"
	res := &PlatformResult{Platform: catalog.PlatformLangChain}
	warn := func(s string) { res.Warnings = append(res.Warnings, s) }
	ix := newPyIndex()
	for _, t := range trees {
		if !addPyTree(res, ix, t, top, "langchain-community", warn) {
			return nil, fmt.Errorf("crawl langchain %s: no %s/ Python package inside", t.Label, top)
		}
	}
	var tools []catalog.Tool
	for _, modName := range ix.sortedModules() {
		m := ix.modules[modName]
		ref := ix.origin[modName]
		switch {
		case strings.HasPrefix(modName, top+".tools."):
			group := groupOf(modName, top+".tools")
			for _, c := range m.Classes {
				bases := ix.baseNames(c)
				if !bases["BaseTool"] && !bases["StructuredTool"] && !bases["Tool"] {
					continue
				}
				if ix.isAlias(c) {
					continue
				}
				text, ok := ix.toolText(c, "description")
				if !ok {
					continue
				}
				eps, creds := ix.classFacts(c)
				tools = append(tools, catalog.Tool{
					ID:          catalog.MakeID(catalog.PlatformLangChain, group, text.Name),
					Name:        text.Name,
					Description: text.Description,
					Platform:    catalog.PlatformLangChain,
					Package:     ref.Package,
					Version:     ref.Version,
					SourceFile:  fmt.Sprintf("%s:%d", m.Path, c.Line),
					Function:    modName + "." + c.Name,
					Endpoints:   eps,
					Auth:        creds,
					Tags:        []string{tagWords(group)},
					RuntimeOnly: text.RuntimeOnly,
				})
			}
		case strings.HasPrefix(modName, top+".agent_toolkits."):
			group := groupOf(modName, top+".agent_toolkits")
			var eps []catalog.Endpoint
			var creds []catalog.Credential
			factsDone := false
			for _, d := range m.Displays {
				if d.Kind != exprDict || d.DictGet("mode") == nil || d.DictGet("name") == nil {
					continue
				}
				name, nrt, nok := ix.resolveString(m, d.DictGet("name"), 0)
				mode, _, _ := ix.resolveString(m, d.DictGet("mode"), 0)
				if !nok || nrt || strings.TrimSpace(name) == "" {
					warn(fmt.Sprintf("%s:%d: toolkit operation name is not a static string; skipped", m.Path, d.Line))
					continue
				}
				t := catalog.Tool{
					ID:         catalog.MakeID(catalog.PlatformLangChain, group, name),
					Name:       strings.TrimSpace(name),
					Platform:   catalog.PlatformLangChain,
					Package:    ref.Package,
					Version:    ref.Version,
					SourceFile: fmt.Sprintf("%s:%d", m.Path, d.Line),
					Function:   mode,
					Tags:       []string{tagWords(group), "toolkit"},
				}
				desc, drt, dok := ix.resolveString(m, d.DictGet("description"), 0)
				if !dok || drt {
					t.RuntimeOnly = append(t.RuntimeOnly, "description")
				} else {
					t.Description = collapseSpace(desc)
				}
				if !factsDone {
					eps, creds = ix.moduleFacts(ix.relatedModulesOf([]*pyModule{m}, 2))
					factsDone = true
				}
				t.Endpoints, t.Auth = eps, creds
				tools = append(tools, t)
			}
		}
	}
	res.Tools, res.Duplicates = dedupeTools(tools, warn)
	return res, nil
}

// isAlias reports whether a class only renames another (class Old(New): pass with a
// deprecation decorator is still a class; here an alias is a class with no attributes, no
// methods and one base that is itself a tool with a name).
func (ix *pyIndex) isAlias(c *pyClass) bool {
	if len(c.Attrs) > 0 || len(c.Methods) > 0 || len(c.Bases) != 1 {
		return false
	}
	_, base, _ := ix.lookup(c.Module, c.Bases[0], 0)
	if base == nil {
		return false
	}
	_, _, present := ix.stringAttr(base, "name")
	return present
}

// relatedModulesOf is relatedModules for module seeds, following imports up to depth levels.
func (ix *pyIndex) relatedModulesOf(seeds []*pyModule, depth int) []*pyModule {
	seen := map[*pyModule]bool{}
	out := append([]*pyModule(nil), seeds...)
	for _, m := range seeds {
		seen[m] = true
	}
	frontier := seeds
	for d := 0; d < depth; d++ {
		var next []*pyModule
		for _, m := range frontier {
			for _, full := range sortedValues(m.Imports) {
				for i := len(full); i > 0; i = strings.LastIndex(full[:i], ".") {
					if im, ok := ix.modules[full[:i]]; ok {
						if !seen[im] && (strings.Contains(im.Name, ".tools.") || strings.Contains(im.Name, "utilities") ||
							strings.Contains(im.Name, "wrapper") || strings.Contains(im.Name, "client")) {
							seen[im] = true
							out = append(out, im)
							next = append(next, im)
						}
						break
					}
				}
			}
		}
		frontier = next
	}
	return out
}

// crewSpec is one entry of crewai-tools' generated tool.specs.json.
type crewSpec struct {
	Name          string `json:"name"`
	HumanizedName string `json:"humanized_name"`
	Description   string `json:"description"`
	EnvVars       []struct {
		Name     string `json:"name"`
		Required bool   `json:"required"`
	} `json:"env_vars"`
}

// CrawlCrewAI reads crewai-tools: every BaseTool subclass under crewai_tools/ with a static
// name, its description, URL attributes (base_url, search_url, ...) and env_vars
// (EnvVar(name=..., required=...)). The generated tool.specs.json shipped in the sdist is used to
// cross-check: disagreements become warnings, and a description the source only builds at run
// time is taken from the spec (the field stays listed in RuntimeOnly).
func CrawlCrewAI(trees []*Tree) (*PlatformResult, error) {
	const top = "crewai_tools"
	res := &PlatformResult{Platform: catalog.PlatformCrewAI}
	warn := func(s string) { res.Warnings = append(res.Warnings, s) }
	ix := newPyIndex()
	specs := map[string]crewSpec{}
	for _, t := range trees {
		if !addPyTree(res, ix, t, top, "crewai-tools", warn) {
			return nil, fmt.Errorf("crawl crewai %s: no %s/ Python package inside", t.Label, top)
		}
		for _, p := range t.Find("tool.specs.json") {
			var doc struct {
				Tools []crewSpec `json:"tools"`
			}
			if err := json.Unmarshal(t.Files[p], &doc); err != nil {
				warn(fmt.Sprintf("%s: %s: %v (cross-check skipped)", t.Label, p, err))
				continue
			}
			for _, s := range doc.Tools {
				specs[s.Name] = s
			}
		}
	}
	if len(specs) == 0 {
		warn("crewai: no tool.specs.json found (the wheel does not ship it; the sdist does): no cross-check")
	}
	var tools []catalog.Tool
	seenClass := map[string]bool{}
	for _, modName := range ix.sortedModules() {
		m := ix.modules[modName]
		ref := ix.origin[modName]
		if !strings.HasPrefix(modName, top+".tools.") && !strings.HasPrefix(modName, top+".aws.") {
			continue
		}
		group := groupOf(modName, top+".tools")
		if strings.HasPrefix(modName, top+".aws.") {
			group = "aws_" + groupOf(modName, top+".aws")
		}
		for _, c := range m.Classes {
			if !ix.baseNames(c)["BaseTool"] {
				continue
			}
			if v, _ := ix.attr(c, "is_deprecated_alias"); v != nil && v.Kind == exprConst && v.Str == "True" {
				continue
			}
			text, ok := ix.toolText(c, "description")
			if !ok {
				// A tool class whose name is set only at run time: the published spec lists it.
				s, listed := specs[c.Name]
				if _, _, present := ix.stringAttr(c, "name"); present || !listed {
					continue
				}
				text = pyToolText{Name: c.Name, RuntimeOnly: []string{"name"}}
				if d, rt, dp := ix.stringAttr(c, "description"); dp && !rt {
					text.Description = collapseSpace(dedent(d))
				} else {
					text.RuntimeOnly = append(text.RuntimeOnly, "description")
				}
				if s.HumanizedName != "" {
					text.Name = s.HumanizedName
				}
			}
			eps, creds := ix.classFacts(c)
			creds = append(creds, ix.crewEnvVars(c)...)
			t := catalog.Tool{
				ID:          catalog.MakeID(catalog.PlatformCrewAI, group, text.Name),
				Name:        text.Name,
				Description: text.Description,
				Platform:    catalog.PlatformCrewAI,
				Package:     ref.Package,
				Version:     ref.Version,
				SourceFile:  fmt.Sprintf("%s:%d", m.Path, c.Line),
				Function:    c.Name,
				Endpoints:   eps,
				Auth:        dedupeCredentials(creds),
				Tags:        []string{tagWords(strings.TrimSuffix(group, "_tool"))},
				RuntimeOnly: text.RuntimeOnly,
			}
			seenClass[c.Name] = true
			if s, ok := specs[c.Name]; ok {
				crossCheckCrew(&t, s, warn)
			}
			tools = append(tools, t)
		}
	}
	for _, name := range sortedKeys(specs) {
		if !seenClass[name] {
			warn(fmt.Sprintf("crewai: tool.specs.json lists %s, which the source crawl did not find as a tool class", name))
		}
	}
	res.Tools, res.Duplicates = dedupeTools(tools, warn)
	return res, nil
}

func crossCheckCrew(t *catalog.Tool, s crewSpec, warn func(string)) {
	if s.HumanizedName != "" && s.HumanizedName != t.Name && !contains(t.RuntimeOnly, "name") {
		warn(fmt.Sprintf("crewai %s: name %q in source, %q in tool.specs.json", t.Function, t.Name, s.HumanizedName))
	}
	specDesc := collapseSpace(s.Description)
	if contains(t.RuntimeOnly, "description") {
		if specDesc != "" {
			t.Description = specDesc
		}
	} else if specDesc != t.Description {
		warn(fmt.Sprintf("crewai %s: description differs from tool.specs.json", t.Function))
	}
	have := map[string]bool{}
	for _, c := range t.Auth {
		have[c.Name] = true
	}
	for _, e := range s.EnvVars {
		if !have[e.Name] {
			warn(fmt.Sprintf("crewai %s: env var %s is in tool.specs.json but not found in source", t.Function, e.Name))
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// crewEnvVars returns the EnvVar(name=..., required=...) declarations inside a class body.
func (ix *pyIndex) crewEnvVars(c *pyClass) []catalog.Credential {
	var out []catalog.Credential
	for _, k := range ix.mro(c) {
		for _, d := range k.Module.Displays {
			if d.Kind != exprCall || d.Line < k.Line || (k.EndLine > 0 && d.Line >= k.EndLine) {
				continue
			}
			nameExpr := d.Kwarg("name")
			if nameExpr == nil && len(d.Args) > 0 {
				nameExpr = d.Args[0]
			}
			name, rt, ok := ix.resolveString(k.Module, nameExpr, 0)
			if !ok || rt || name == "" {
				continue
			}
			required := true // EnvVar.required defaults to True
			if r := d.Kwarg("required"); r != nil && r.Kind == exprConst && r.Str == "False" {
				required = false
			}
			out = append(out, catalog.Credential{Name: name, Kind: "env", Required: required})
		}
	}
	return out
}

// secretParam matches __init__ parameters that carry credentials; notSecret the names it would
// take for one that are counts or settings (max_tokens, a tokenizer, an author).
var (
	secretParam = regexp.MustCompile(`(?i)(api_?key|token|secret|password|credential|access_key|client_id|auth)`)
	notSecret   = regexp.MustCompile(`(?i)((^|_)(max|min|num|n|total)_?tokens?($|_)|(^|_)tokens($|_)|tokeni[sz]|author)`)
)

// isSecretParam reports whether an __init__ parameter carries a credential.
func isSecretParam(name string) bool {
	return secretParam.MatchString(name) && !notSecret.MatchString(name)
}

// CrawlLlamaIndex reads llama-index-tools-* packages: for every BaseToolSpec subclass, each name
// in spec_functions (inherited across files and packages) is a tool described by its method's
// docstring. Credentials are the secret-looking parameters of the spec's __init__ plus the
// environment variables its modules read.
func CrawlLlamaIndex(trees []*Tree) (*PlatformResult, error) {
	const top = "llama_index"
	res := &PlatformResult{Platform: catalog.PlatformLlamaIndex}
	warn := func(s string) { res.Warnings = append(res.Warnings, s) }
	ix := newPyIndex()
	for _, t := range trees {
		if !addPyTree(res, ix, t, top, path.Base(t.Label), warn) {
			warn(fmt.Sprintf("crawl llamaindex %s: no %s/ Python package inside", t.Label, top))
		}
	}
	// In a source tree of the LlamaIndex monorepo each package lives in its own
	// llama-index-tools-<name>/ directory: that directory names the module's package.
	for modName, m := range ix.modules {
		for _, part := range strings.Split(m.Path, "/") {
			if strings.HasPrefix(part, "llama-index-tools-") {
				ref := ix.origin[modName]
				ref.Package = part
				ix.origin[modName] = ref
				break
			}
		}
	}
	var tools []catalog.Tool
	for _, modName := range ix.sortedModules() {
		m := ix.modules[modName]
		ref := ix.origin[modName]
		for _, c := range m.Classes {
			if !ix.baseNames(c)["BaseToolSpec"] {
				continue
			}
			sf, owner := ix.attr(c, "spec_functions")
			if sf == nil {
				continue
			}
			if sf.Kind != exprList {
				warn(fmt.Sprintf("%s:%d: %s.spec_functions is not a literal list; skipped", owner.Module.Path, sf.Line, c.Name))
				continue
			}
			short := strings.TrimPrefix(strings.ToLower(ref.Package), "llama-index-tools-")
			short = strings.TrimPrefix(short, "llama_index_tools_")
			eps, creds := ix.classFacts(c)
			if init, _ := ix.method(c, "__init__"); init != nil {
				for _, p := range init.Params {
					if p != "self" && isSecretParam(p) {
						creds = append(creds, catalog.Credential{Name: p, Kind: "api_key", Required: !init.Defaulted[p]})
					}
				}
			}
			creds = dedupeCredentials(creds)
			for _, el := range sf.Elems {
				// An element is "fn" or ("fn", "afn") (sync and async variants of one tool).
				if el.Kind == exprList && len(el.Elems) > 0 {
					el = el.Elems[0]
				}
				fnName, rt, ok := ix.resolveString(owner.Module, el, 0)
				if !ok || rt || fnName == "" {
					warn(fmt.Sprintf("%s:%d: %s.spec_functions entry is not a static string; skipped", owner.Module.Path, el.Line, c.Name))
					continue
				}
				t := catalog.Tool{
					ID:         catalog.MakeID(catalog.PlatformLlamaIndex, short+":"+c.Name, fnName),
					Name:       fnName,
					Platform:   catalog.PlatformLlamaIndex,
					Package:    ref.Package,
					Version:    ref.Version,
					SourceFile: fmt.Sprintf("%s:%d", m.Path, c.Line),
					Function:   c.Name + "." + fnName,
					Endpoints:  eps,
					Auth:       creds,
					Tags:       []string{tagWords(short), tagWords(strings.TrimSuffix(c.Name, "ToolSpec"))},
				}
				fn, fnOwner := ix.method(c, fnName)
				switch {
				case fn == nil:
					// to_tool_list() would fail on it: not a tool.
					warn(fmt.Sprintf("%s:%d: %s lists %s in spec_functions but defines no such method; skipped", m.Path, c.Line, c.Name, fnName))
					continue
				case strings.TrimSpace(fn.Doc) == "":
					t.RuntimeOnly = []string{"description"}
				default:
					t.Description = cleanDoc(fn.Doc)
					t.SourceFile = fmt.Sprintf("%s:%d", fnOwner.Module.Path, fn.Line)
					for _, p := range fn.Params {
						if p != "self" && p != "cls" {
							t.Parameters = append(t.Parameters, catalog.Parameter{Name: p, Required: !fn.Defaulted[p]})
						}
					}
				}
				t.Tags = uniqueStrings(t.Tags)
				tools = append(tools, t)
			}
		}
	}
	res.Tools, res.Duplicates = dedupeTools(tools, warn)
	return res, nil
}
