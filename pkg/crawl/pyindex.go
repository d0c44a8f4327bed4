package crawl

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"unicode"

	"github.com/rated-dev/rated/pkg/catalog"
)

// pyIndex holds the parsed modules of one platform (possibly many packages) so names, imports
// and base classes can be resolved across files and packages.
type pyIndex struct {
	modules map[string]*pyModule // dotted module name -> module
	classes map[string]*pyClass  // dotted module name + "." + class name -> class
	// origin maps a module name to the source (package, version) it came from.
	origin map[string]sourceRef
}

// sourceRef is the package and version a module was read from.
type sourceRef struct {
	Package, Version, Label string
}

func newPyIndex() *pyIndex {
	return &pyIndex{modules: map[string]*pyModule{}, classes: map[string]*pyClass{}, origin: map[string]sourceRef{}}
}

// moduleName maps a file path in a tree to its dotted module name, given the top-level package
// name (the path from its first occurrence on). It returns false for files outside the package.
func moduleName(p, top string) (string, bool, bool) {
	if !strings.HasSuffix(p, ".py") {
		return "", false, false
	}
	var rel string
	switch {
	case strings.HasPrefix(p, top+"/"):
		rel = p
	case strings.Contains(p, "/"+top+"/"):
		rel = p[strings.Index(p, "/"+top+"/")+1:]
	default:
		return "", false, false
	}
	rel = strings.TrimSuffix(rel, ".py")
	isPkg := false
	if path.Base(rel) == "__init__" {
		rel = path.Dir(rel)
		isPkg = true
	}
	return strings.ReplaceAll(rel, "/", "."), isPkg, true
}

// nonIdentifier returns the first directory or file name of p, from the package top down, that
// is not a Python identifier.
func nonIdentifier(p, top string) (string, bool) {
	if i := strings.Index(p, "/"+top+"/"); i >= 0 {
		p = p[i+1:]
	}
	for _, part := range strings.Split(strings.TrimSuffix(p, ".py"), "/") {
		ok := part != ""
		for i, r := range part {
			if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
				ok = false
				break
			}
		}
		if !ok {
			return part, true
		}
	}
	return "", false
}

// addTree parses the Python files of a tree that belong to package top. Files that fail to parse
// are skipped with a warning naming the file and line.
func (ix *pyIndex) addTree(t *Tree, top string, ref sourceRef, include func(string) bool, warn func(string)) {
	for _, p := range t.Paths() {
		name, isPkg, ok := moduleName(p, top)
		if !ok || (include != nil && !include(p)) {
			continue
		}
		if part, ok := nonIdentifier(p, top); ok {
			// Python cannot import it, and its parts would become tool ids.
			warn(fmt.Sprintf("%s: skipped %s: %q is not a Python identifier, so the file is no importable module", t.Label, p, part))
			continue
		}
		if strings.Contains(p, "/tests/") || strings.HasPrefix(p, "tests/") {
			continue
		}
		m, err := parsePython(p, name, isPkg, t.Files[p])
		if err != nil {
			warn(fmt.Sprintf("%s: skipped %s: %v", t.Label, p, err))
			continue
		}
		if _, dup := ix.modules[name]; dup {
			continue // the same module from two sources: the first one wins
		}
		ix.modules[name] = m
		ix.origin[name] = ref
		for _, c := range m.Classes {
			ix.classes[name+"."+c.Name] = c
		}
	}
}

// sortedModules returns module names in order, so crawls are deterministic.
func (ix *pyIndex) sortedModules() []string {
	names := make([]string, 0, len(ix.modules))
	for n := range ix.modules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// lookup resolves a dotted name as seen from module m to a module-level value: an assignment, a
// class or a module. Imports and package re-exports are followed up to a fixed depth.
func (ix *pyIndex) lookup(m *pyModule, name string, depth int) (val *pyExpr, cls *pyClass, vm *pyModule) {
	if depth > 12 || m == nil {
		return nil, nil, nil
	}
	head, rest, dotted := strings.Cut(name, ".")
	if !dotted {
		if v, ok := m.Assigns[name]; ok {
			// An alias of another name (Alias = Target) resolves to the target.
			if v.Kind == exprName {
				if rv, rc, rm := ix.lookup(m, v.Name, depth+1); rv != nil || rc != nil {
					return rv, rc, rm
				}
			}
			return v, nil, m
		}
		for _, c := range m.Classes {
			if c.Name == name {
				return nil, c, m
			}
		}
		if full, ok := m.Imports[name]; ok {
			return ix.lookupFull(full, depth+1)
		}
		return nil, nil, nil
	}
	// head.rest: head is an imported module or a class.
	if full, ok := m.Imports[head]; ok {
		return ix.lookupFull(full+"."+rest, depth+1)
	}
	return ix.lookupFull(m.Name+"."+name, depth+1)
}

// lookupFull resolves a fully qualified dotted name.
func (ix *pyIndex) lookupFull(full string, depth int) (*pyExpr, *pyClass, *pyModule) {
	if c, ok := ix.classes[full]; ok {
		return nil, c, c.Module
	}
	// Split into the longest module prefix and the remaining attribute path.
	parts := strings.Split(full, ".")
	for i := len(parts) - 1; i >= 1; i-- {
		modName := strings.Join(parts[:i], ".")
		if m, ok := ix.modules[modName]; ok {
			return ix.lookup(m, strings.Join(parts[i:], "."), depth+1)
		}
	}
	return nil, nil, nil
}

// resolveString evaluates a string-valued expression in module m: literals, concatenations,
// names bound to strings (also in other modules), Field(default=...)/Field("...") calls.
// runtime is true when the value depends on run-time data; ok is false when it is not a string.
func (ix *pyIndex) resolveString(m *pyModule, e *pyExpr, depth int) (s string, runtime, ok bool) {
	if e == nil || depth > 12 {
		return "", false, false
	}
	switch e.Kind {
	case exprStr:
		if len(e.Concat) == 0 {
			return e.Str, e.Runtime, true
		}
		var b strings.Builder
		rt := e.Runtime
		for _, part := range e.Concat {
			ps, prt, pok := ix.resolveString(m, part, depth+1)
			if !pok {
				rt = true
				continue
			}
			rt = rt || prt
			b.WriteString(ps)
		}
		return b.String(), rt, true
	case exprName:
		v, _, vm := ix.lookup(m, e.Name, 0)
		if v == nil {
			return "", false, false
		}
		return ix.resolveString(vm, v, depth+1)
	case exprCall:
		callee := e.Name
		if i := strings.LastIndex(callee, "."); i >= 0 {
			callee = callee[i+1:]
		}
		switch callee {
		case "Field", "PrivateAttr", "field":
			if d := e.Kwarg("default"); d != nil {
				return ix.resolveString(m, d, depth+1)
			}
			if len(e.Args) > 0 {
				return ix.resolveString(m, e.Args[0], depth+1)
			}
			if e.Kwarg("default_factory") != nil {
				return "", true, true
			}
		case "dedent", "cleandoc":
			if len(e.Args) > 0 {
				s, rt, ok := ix.resolveString(m, e.Args[0], depth+1)
				return dedent(s), rt, ok
			}
		case "str":
			if len(e.Args) > 0 {
				return ix.resolveString(m, e.Args[0], depth+1)
			}
		}
	}
	return "", false, false
}

// mro returns the class and its ancestors found in the index, depth first, each once.
func (ix *pyIndex) mro(c *pyClass) []*pyClass {
	var out []*pyClass
	seen := map[*pyClass]bool{}
	var walk func(*pyClass, int)
	walk = func(c *pyClass, depth int) {
		if c == nil || seen[c] || depth > 20 {
			return
		}
		seen[c] = true
		out = append(out, c)
		for _, b := range c.Bases {
			_, bc, _ := ix.lookup(c.Module, b, 0)
			walk(bc, depth+1)
		}
	}
	walk(c, 0)
	return out
}

// baseNames returns the final names of every base in the class hierarchy, including bases not
// in the index (external classes such as langchain_core's BaseTool).
func (ix *pyIndex) baseNames(c *pyClass) map[string]bool {
	out := map[string]bool{}
	for _, k := range ix.mro(c) {
		for _, b := range k.Bases {
			if i := strings.LastIndex(b, "."); i >= 0 {
				b = b[i+1:]
			}
			// Follow an import alias (from x import BaseTool as _BaseTool).
			if full, ok := k.Module.Imports[b]; ok {
				b = full[strings.LastIndex(full, ".")+1:]
			}
			out[b] = true
		}
	}
	return out
}

// attr finds a class attribute along the MRO and returns it with the class defining it.
func (ix *pyIndex) attr(c *pyClass, name string) (*pyExpr, *pyClass) {
	for _, k := range ix.mro(c) {
		if v, ok := k.Attrs[name]; ok {
			return v, k
		}
	}
	return nil, nil
}

// method finds a method along the MRO.
func (ix *pyIndex) method(c *pyClass, name string) (*pyFunc, *pyClass) {
	for _, k := range ix.mro(c) {
		if f, ok := k.Methods[name]; ok {
			return f, k
		}
	}
	return nil, nil
}

// stringAttr resolves a string class attribute along the MRO. present is false when no class
// defines it; runtime is true when its value is only known at run time.
func (ix *pyIndex) stringAttr(c *pyClass, name string) (s string, runtime, present bool) {
	v, owner := ix.attr(c, name)
	if v == nil {
		return "", false, false
	}
	s, rt, ok := ix.resolveString(owner.Module, v, 0)
	if !ok {
		return "", true, true
	}
	return s, rt, true
}

// moduleFacts collects endpoints and environment variables from a set of modules.
func (ix *pyIndex) moduleFacts(mods []*pyModule) ([]catalog.Endpoint, []catalog.Credential) {
	var eps []catalog.Endpoint
	var creds []catalog.Credential
	for _, m := range mods {
		if m == nil {
			continue
		}
		eps = append(eps, urlsIn(m.Strings)...)
		for _, e := range m.EnvVars {
			creds = append(creds, catalog.Credential{Name: e.Name, Kind: "env", Required: !e.Optional})
		}
	}
	return dedupeEndpoints(eps), dedupeCredentials(creds)
}

// relatedModules returns the module of a class, the modules of its ancestors, and the modules
// they import from the same top-level package whose name mentions "utilities" or "api_wrapper"
// or that sit in the same directory (API wrappers hold the URLs and env vars).
func (ix *pyIndex) relatedModules(c *pyClass) []*pyModule {
	seen := map[*pyModule]bool{}
	var out []*pyModule
	addMod := func(m *pyModule) {
		if m != nil && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, k := range ix.mro(c) {
		addMod(k.Module)
	}
	for _, m := range append([]*pyModule(nil), out...) {
		dir := m.Package
		for _, full := range sortedValues(m.Imports) {
			for i := len(full); i > 0; i = strings.LastIndex(full[:i], ".") {
				if im, ok := ix.modules[full[:i]]; ok {
					if strings.Contains(im.Name, "utilities") || strings.Contains(im.Name, "wrapper") ||
						strings.Contains(im.Name, "client") || (im.Package == dir && !strings.HasSuffix(im.Name, "__init__")) {
						addMod(im)
					}
					break
				}
			}
		}
	}
	return out
}

func sortedValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// dedent removes the common leading whitespace of the lines of s, like textwrap.dedent.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	prefix := ""
	first := true
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		if first {
			prefix, first = ind, false
			continue
		}
		for !strings.HasPrefix(ind, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}

// cleanDoc normalises a docstring like inspect.cleandoc and collapses it to one paragraph of
// prose: the text up to the first "Args:"/"Returns:"-style section.
func cleanDoc(doc string) string {
	lines := strings.Split(strings.ReplaceAll(doc, "\r\n", "\n"), "\n")
	var keep []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch strings.ToLower(strings.TrimSuffix(t, ":")) {
		case "args", "arguments", "parameters", "params", "returns", "return", "raises", "example", "examples", "yields", "note", "notes":
			if strings.HasSuffix(t, ":") {
				return collapseSpace(strings.Join(keep, " "))
			}
		}
		if strings.HasPrefix(t, ":param") || strings.HasPrefix(t, ":return") {
			return collapseSpace(strings.Join(keep, " "))
		}
		keep = append(keep, t)
	}
	return collapseSpace(strings.Join(keep, " "))
}

// collapseSpace trims s and replaces runs of white space by single spaces.
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
