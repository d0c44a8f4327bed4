package crawl

import (
	"fmt"
	"strings"
)

// pyExprKind says what a parsed Python expression is.
type pyExprKind int

const (
	exprUnknown pyExprKind = iota
	exprStr
	exprName
	exprCall
	exprList
	exprDict
	exprConst // numbers, True/False/None
)

// pyExpr is the part of a Python expression the crawler understands: string literals (with
// implicit and '+' concatenation), dotted names, calls, list/tuple/set and dict displays.
// Anything else is exprUnknown.
type pyExpr struct {
	Kind pyExprKind
	Line int
	// Str is the value of a string; Runtime marks a string known only at run time (an f-string
	// with placeholders, '%'/.format() formatting, or concatenation with a non-literal).
	Str     string
	Runtime bool
	// Concat, when set, lists the string and name parts of a '+' concatenation, resolved later.
	Concat []*pyExpr
	// Name is the dotted name of exprName, or the callee of exprCall.
	Name string
	// Args and KwNames/KwArgs are a call's arguments.
	Args    []*pyExpr
	KwNames []string
	KwArgs  []*pyExpr
	// Elems are list/tuple/set elements, or dict keys (with Values the dict values).
	Elems  []*pyExpr
	Values []*pyExpr
}

// Kwarg returns the keyword argument name of a call, or nil.
func (e *pyExpr) Kwarg(name string) *pyExpr {
	if e == nil {
		return nil
	}
	for i, n := range e.KwNames {
		if n == name {
			return e.KwArgs[i]
		}
	}
	return nil
}

// DictGet returns the value of a string key of a dict display, or nil.
func (e *pyExpr) DictGet(key string) *pyExpr {
	if e == nil || e.Kind != exprDict {
		return nil
	}
	for i, k := range e.Elems {
		if k.Kind == exprStr && k.Str == key {
			return e.Values[i]
		}
	}
	return nil
}

// pyFunc is a function or method definition.
type pyFunc struct {
	Name   string
	Doc    string
	Line   int
	Params []string
	// Defaulted holds the parameters that have a default value.
	Defaulted map[string]bool
}

// pyClass is a class definition with its class-level assignments and methods.
type pyClass struct {
	Name    string
	Line    int
	Bases   []string // dotted names as written, subscripts dropped
	Doc     string
	Attrs   map[string]*pyExpr
	Methods map[string]*pyFunc
	Module  *pyModule
	// EndLine is the first line after the class body.
	EndLine int
}

// pyModule is one parsed Python file.
type pyModule struct {
	Path    string // path inside its tree
	Name    string // dotted module name
	Package string // dotted package name (for relative imports)
	Classes []*pyClass
	// Assigns are module-level NAME = expr bindings (last one wins).
	Assigns map[string]*pyExpr
	// Imports maps a local name to the dotted name it refers to ("pkg.mod.Name" or "pkg.mod").
	Imports map[string]string
	Funcs   map[string]*pyFunc
	// Strings are all string literals of the module in order, for URL extraction.
	Strings []string
	// EnvVars are environment variable names the module reads, with whether a default is given.
	EnvVars []envRead
	// Displays are the dict displays holding a "description" key and the EnvVar(...) calls found
	// anywhere in the module, function bodies included (toolkit operation tables, env var specs).
	Displays []*pyExpr
}

// envRead is one read of an environment variable found in source.
type envRead struct {
	Name     string
	Optional bool
}

// pyParser walks the token stream of one module.
type pyParser struct {
	toks []pyTok
	pos  int
	mod  *pyModule
}

// parsePython parses a module. Syntax errors of the lexer are returned; statements outside the
// understood subset are skipped.
func parsePython(path, modName string, isPackage bool, src []byte) (m *pyModule, err error) {
	defer func() {
		if r := recover(); r != nil {
			// The parser indexes ahead in the token stream; a truncated statement at the end of
			// a malformed file surfaces here and is reported as a syntax error.
			m, err = nil, &pySyntaxError{Line: 0, Msg: fmt.Sprintf("unparseable: %v", r)}
		}
	}()
	toks, err := lexPython(src)
	if err != nil {
		return nil, err
	}
	m = &pyModule{Path: path, Name: modName, Assigns: map[string]*pyExpr{}, Imports: map[string]string{}, Funcs: map[string]*pyFunc{}}
	m.Package = modName
	if !isPackage {
		if i := strings.LastIndex(modName, "."); i >= 0 {
			m.Package = modName[:i]
		} else {
			m.Package = ""
		}
	}
	for _, t := range toks {
		if t.Kind == tokString {
			m.Strings = append(m.Strings, t.Text)
		}
	}
	m.EnvVars = findEnvReads(toks)
	p := &pyParser{toks: toks, mod: m}
	p.block(nil, true)
	for i, t := range toks {
		isDict := t.Kind == tokOp && t.Text == "{" && i+1 < len(toks) && toks[i+1].Kind == tokString
		isEnvVar := t.Kind == tokName && t.Text == "EnvVar" && i+1 < len(toks) && toks[i+1].Text == "("
		if !isDict && !isEnvVar {
			continue
		}
		sub := &pyParser{toks: toks, pos: i + 1, mod: m}
		var e *pyExpr
		if isDict {
			e = sub.dictOrSet(t.Line)
		} else {
			sub.pos = i
			e = sub.atom()
		}
		if (e.Kind == exprDict && e.DictGet("description") != nil) || e.Kind == exprCall {
			m.Displays = append(m.Displays, e)
		}
	}
	return m, nil
}

func (p *pyParser) peek() pyTok { return p.toks[p.pos] }
func (p *pyParser) next() pyTok {
	t := p.toks[p.pos]
	if t.Kind != tokEOF {
		p.pos++
	}
	return t
}
func (p *pyParser) isOp(s string) bool {
	t := p.peek()
	return t.Kind == tokOp && t.Text == s
}
func (p *pyParser) isName(s string) bool {
	t := p.peek()
	return t.Kind == tokName && t.Text == s
}

// skipLine consumes tokens up to and including the end of the logical line.
func (p *pyParser) skipLine() {
	for {
		t := p.next()
		if t.Kind == tokNewline || t.Kind == tokEOF {
			return
		}
		if t.Kind == tokIndent || t.Kind == tokDedent {
			continue
		}
	}
}

// skipBlock consumes an indented block (after the ':' NEWLINE), or the rest of a one-line body.
func (p *pyParser) skipSuite() {
	if p.peek().Kind != tokNewline {
		p.skipLine()
		return
	}
	p.next()
	if p.peek().Kind != tokIndent {
		return
	}
	p.next()
	depth := 1
	for depth > 0 {
		t := p.next()
		switch t.Kind {
		case tokIndent:
			depth++
		case tokDedent:
			depth--
		case tokEOF:
			return
		}
	}
}

// block parses statements until a DEDENT (or EOF at top level). cls is the class being filled,
// nil at module level.
func (p *pyParser) block(cls *pyClass, top bool) {
	for {
		t := p.peek()
		switch {
		case t.Kind == tokEOF:
			return
		case t.Kind == tokDedent:
			p.next()
			if !top {
				return
			}
		case t.Kind == tokNewline || t.Kind == tokIndent:
			p.next()
		default:
			p.statement(cls)
		}
	}
}

// suite parses the body after a compound statement's ':' into the same scope (used for if/try/
// with blocks, whose definitions still belong to the enclosing module or class).
func (p *pyParser) suite(cls *pyClass) {
	if p.peek().Kind != tokNewline {
		p.statement(cls)
		return
	}
	p.next()
	if p.peek().Kind != tokIndent {
		return
	}
	p.next()
	p.block(cls, false)
}

func (p *pyParser) statement(cls *pyClass) {
	t := p.peek()
	if t.Kind == tokOp && t.Text == "@" {
		p.skipLine()
		return
	}
	if t.Kind == tokName {
		switch t.Text {
		case "class":
			p.classDef(cls)
			return
		case "def":
			p.funcDef(cls)
			return
		case "async":
			p.next()
			if p.isName("def") {
				p.funcDef(cls)
			} else {
				p.skipLine()
			}
			return
		case "if", "elif", "else", "try", "except", "finally", "with", "for", "while":
			// Skip to the ':' that ends the header at bracket depth 0, then read the body
			// as part of the enclosing scope.
			p.next()
			depth := 0
			for {
				u := p.next()
				if u.Kind == tokEOF || u.Kind == tokNewline {
					return
				}
				if u.Kind == tokOp {
					switch u.Text {
					case "(", "[", "{":
						depth++
					case ")", "]", "}":
						depth--
					case ":":
						if depth == 0 {
							if t.Text == "for" || t.Text == "while" {
								p.skipSuite()
							} else {
								p.suite(cls)
							}
							return
						}
					}
				}
			}
		case "from":
			if cls == nil {
				p.fromImport()
				return
			}
		case "import":
			if cls == nil {
				p.importStmt()
				return
			}
		}
	}
	if t.Kind == tokString && cls != nil && cls.Doc == "" && len(cls.Attrs) == 0 && len(cls.Methods) == 0 {
		cls.Doc = t.Text
	}
	// Assignment: NAME [':' annotation] '=' expr.
	if t.Kind == tokName && p.toks[p.pos+1].Kind == tokOp {
		op := p.toks[p.pos+1].Text
		if op == "=" || op == ":" {
			name := t.Text
			p.pos += 2
			if op == ":" {
				p.expr() // annotation
				if !p.isOp("=") {
					p.skipLine()
					return
				}
				p.next()
			}
			val := p.expr()
			// Chained assignment a = b = expr: take the last value.
			for p.isOp("=") {
				p.next()
				val = p.expr()
			}
			if cls != nil {
				cls.Attrs[name] = val
			} else {
				p.mod.Assigns[name] = val
			}
			p.skipLine()
			return
		}
	}
	p.skipLine()
}

func (p *pyParser) dotted() string {
	var parts []string
	for {
		t := p.peek()
		if t.Kind == tokOp && t.Text == "." {
			parts = append(parts, "")
			p.next()
			continue
		}
		if t.Kind == tokOp && t.Text == "..." {
			parts = append(parts, "", "", "")
			p.next()
			continue
		}
		if t.Kind != tokName {
			break
		}
		parts = append(parts, t.Text)
		p.next()
		if !p.isOp(".") {
			break
		}
		p.next()
		if p.peek().Kind != tokName {
			break
		}
	}
	return strings.Join(parts, ".")
}

// fromImport reads `from X import a [as b], ...` including relative module names.
func (p *pyParser) fromImport() {
	p.next()
	// Leading dots of a relative import.
	dots := 0
	for p.isOp(".") || p.isOp("...") {
		if p.isOp("...") {
			dots += 3
		} else {
			dots++
		}
		p.next()
	}
	mod := ""
	if p.peek().Kind == tokName && !p.isName("import") {
		mod = p.dotted()
	}
	if dots > 0 {
		base := p.mod.Package
		for i := 1; i < dots; i++ {
			if j := strings.LastIndex(base, "."); j >= 0 {
				base = base[:j]
			} else {
				base = ""
			}
		}
		if mod == "" {
			mod = base
		} else if base != "" {
			mod = base + "." + mod
		}
	}
	if !p.isName("import") {
		p.skipLine()
		return
	}
	p.next()
	paren := p.isOp("(")
	if paren {
		p.next()
	}
	for {
		t := p.peek()
		if t.Kind != tokName {
			break
		}
		p.next()
		local := t.Text
		if p.isName("as") {
			p.next()
			if p.peek().Kind == tokName {
				local = p.next().Text
			}
		}
		if mod != "" {
			p.mod.Imports[local] = mod + "." + t.Text
		}
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.skipLine()
}

// importStmt reads `import a.b [as c], ...`.
func (p *pyParser) importStmt() {
	p.next()
	for p.peek().Kind == tokName {
		full := p.dotted()
		local := strings.SplitN(full, ".", 2)[0]
		target := local
		if p.isName("as") {
			p.next()
			if p.peek().Kind == tokName {
				local = p.next().Text
				target = full
			}
		}
		p.mod.Imports[local] = target
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.skipLine()
}

func (p *pyParser) classDef(outer *pyClass) {
	line := p.next().Line
	if p.peek().Kind != tokName {
		p.skipLine()
		return
	}
	c := &pyClass{Name: p.next().Text, Line: line, Attrs: map[string]*pyExpr{}, Methods: map[string]*pyFunc{}, Module: p.mod}
	if p.isOp("(") {
		p.next()
		for !p.isOp(")") && p.peek().Kind != tokEOF {
			if p.peek().Kind == tokName && p.toks[p.pos+1].Kind == tokOp && p.toks[p.pos+1].Text == "=" {
				p.pos += 2 // metaclass=..., keyword arguments
				p.expr()
			} else {
				e := p.expr()
				if e.Kind == exprName {
					c.Bases = append(c.Bases, e.Name)
				} else if e.Kind == exprCall && e.Name != "" { // Generic[T] is parsed as a subscript
					c.Bases = append(c.Bases, e.Name)
				}
			}
			if p.isOp(",") {
				p.next()
			} else if !p.isOp(")") {
				p.next()
			}
		}
		p.next()
	}
	if !p.isOp(":") {
		p.skipLine()
		return
	}
	p.next()
	if outer == nil {
		p.mod.Classes = append(p.mod.Classes, c)
	}
	if p.peek().Kind != tokNewline {
		p.statement(c)
		return
	}
	p.next()
	if p.peek().Kind != tokIndent {
		return
	}
	p.next()
	p.block(c, false)
	c.EndLine = p.peek().Line
}

func (p *pyParser) funcDef(cls *pyClass) {
	line := p.next().Line
	if p.peek().Kind != tokName {
		p.skipLine()
		return
	}
	f := &pyFunc{Name: p.next().Text, Line: line, Defaulted: map[string]bool{}}
	// Parameters: names at depth 1 that follow '(' or ','.
	if p.isOp("(") {
		depth := 0
		expectName := true
		for {
			t := p.next()
			if t.Kind == tokEOF {
				return
			}
			if t.Kind == tokOp {
				switch t.Text {
				case "(", "[", "{":
					depth++
					if depth == 1 {
						expectName = true
					}
					continue
				case ")", "]", "}":
					depth--
				case ",":
					if depth == 1 {
						expectName = true
						continue
					}
				case "*", "**", "/":
					continue
				case "=":
					if depth == 1 && len(f.Params) > 0 {
						f.Defaulted[f.Params[len(f.Params)-1]] = true
					}
				}
				if depth == 0 {
					break
				}
				expectName = false
				continue
			}
			if t.Kind == tokName && depth == 1 && expectName {
				f.Params = append(f.Params, t.Text)
			}
			expectName = false
		}
	}
	// Return annotation and ':'.
	depth := 0
	for {
		t := p.next()
		if t.Kind == tokEOF || t.Kind == tokNewline {
			return
		}
		if t.Kind == tokOp {
			if t.Text == "(" || t.Text == "[" || t.Text == "{" {
				depth++
			} else if t.Text == ")" || t.Text == "]" || t.Text == "}" {
				depth--
			} else if t.Text == ":" && depth == 0 {
				break
			}
		}
	}
	// Docstring: the first statement of the body, if it is a string.
	if p.peek().Kind == tokNewline {
		if p.toks[p.pos+1].Kind == tokIndent && p.toks[p.pos+2].Kind == tokString {
			f.Doc = p.toks[p.pos+2].Text
		}
	} else if p.peek().Kind == tokString {
		f.Doc = p.peek().Text
	}
	p.skipSuite()
	if cls != nil {
		cls.Methods[f.Name] = f
	} else {
		p.mod.Funcs[f.Name] = f
	}
}

// expr parses an expression up to a terminator at bracket depth 0 (',', ')', ']', '}', ':',
// '=', NEWLINE). It understands string concatenation and the displays and calls listed on
// pyExpr; other constructs become exprUnknown (with Runtime set when a string was involved).
func (p *pyParser) expr() *pyExpr {
	line := p.peek().Line
	var parts []*pyExpr
	var ops []string
	for {
		t := p.peek()
		if t.Kind == tokNewline || t.Kind == tokEOF || t.Kind == tokIndent || t.Kind == tokDedent {
			break
		}
		if t.Kind == tokOp {
			switch t.Text {
			case ",", ")", "]", "}", ":", "=":
				goto done
			case "+", "-", "*", "/", "%", "|", "&", "**", "//", "<", ">", "==", "!=", "<=", ">=", "@", "^", "<<", ">>", "~", "->", ":=":
				ops = append(ops, t.Text)
				p.next()
				continue
			}
		}
		if t.Kind == tokName {
			switch t.Text {
			case "lambda":
				p.skipExprTail()
				return &pyExpr{Kind: exprUnknown, Line: line}
			case "if", "else", "and", "or", "not", "in", "is", "for", "async", "await":
				ops = append(ops, t.Text)
				p.next()
				continue
			}
		}
		a := p.atom()
		if a == nil {
			break
		}
		parts = append(parts, a)
	}
done:
	if len(parts) == 0 {
		return &pyExpr{Kind: exprUnknown, Line: line}
	}
	if len(parts) == 1 && len(ops) == 0 {
		return parts[0]
	}
	// All operators '+' between strings: concatenation.
	allPlus := len(ops) == len(parts)-1
	for _, o := range ops {
		if o != "+" {
			allPlus = false
		}
	}
	hasStr := false
	for _, a := range parts {
		if a.Kind == exprStr {
			hasStr = true
		}
	}
	if allPlus && hasStr {
		out := &pyExpr{Kind: exprStr, Line: line}
		for _, a := range parts {
			switch a.Kind {
			case exprStr, exprName:
				out.Concat = append(out.Concat, a)
			default:
				out.Runtime = true
			}
		}
		return out
	}
	if hasStr {
		return &pyExpr{Kind: exprStr, Line: line, Runtime: true, Str: parts[0].Str}
	}
	return &pyExpr{Kind: exprUnknown, Line: line}
}

// skipExprTail consumes tokens to the next terminator at depth 0.
func (p *pyParser) skipExprTail() {
	depth := 0
	for {
		t := p.peek()
		if t.Kind == tokNewline || t.Kind == tokEOF {
			return
		}
		if t.Kind == tokOp {
			switch t.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return
				}
				depth--
			case ",", ":":
				if depth == 0 {
					return
				}
			}
		}
		p.next()
	}
}

// atom parses a primary with its trailers (attribute access, calls, subscripts).
func (p *pyParser) atom() *pyExpr {
	t := p.peek()
	var e *pyExpr
	switch {
	case t.Kind == tokString:
		e = &pyExpr{Kind: exprStr, Line: t.Line}
		for p.peek().Kind == tokString { // implicit concatenation
			s := p.next()
			e.Str += s.Text
			e.Runtime = e.Runtime || s.Runtime
		}
	case t.Kind == tokNumber:
		p.next()
		e = &pyExpr{Kind: exprConst, Line: t.Line, Str: t.Text}
	case t.Kind == tokName:
		p.next()
		switch t.Text {
		case "True", "False", "None":
			e = &pyExpr{Kind: exprConst, Line: t.Line, Str: t.Text}
		default:
			e = &pyExpr{Kind: exprName, Line: t.Line, Name: t.Text}
		}
	case t.Kind == tokOp && t.Text == "(":
		p.next()
		elems, trailingComma := p.exprList(")")
		if len(elems) == 1 && !trailingComma {
			e = elems[0]
		} else {
			e = &pyExpr{Kind: exprList, Line: t.Line, Elems: elems}
		}
	case t.Kind == tokOp && t.Text == "[":
		p.next()
		elems, _ := p.exprList("]")
		e = &pyExpr{Kind: exprList, Line: t.Line, Elems: elems}
	case t.Kind == tokOp && t.Text == "{":
		p.next()
		e = p.dictOrSet(t.Line)
	case t.Kind == tokOp && (t.Text == "*" || t.Text == "**" || t.Text == "..."):
		p.next()
		return &pyExpr{Kind: exprUnknown, Line: t.Line}
	default:
		p.next()
		return &pyExpr{Kind: exprUnknown, Line: t.Line}
	}
	for {
		switch {
		case p.isOp("."):
			p.next()
			if p.peek().Kind != tokName {
				return &pyExpr{Kind: exprUnknown, Line: t.Line}
			}
			attr := p.next().Text
			if e.Kind == exprName {
				e = &pyExpr{Kind: exprName, Line: e.Line, Name: e.Name + "." + attr}
			} else if e.Kind == exprStr && (attr == "format" || attr == "format_map") {
				e = &pyExpr{Kind: exprStr, Line: e.Line, Str: e.Str, Runtime: true}
				if p.isOp("(") {
					p.next()
					p.exprList(")")
				}
			} else if e.Kind == exprStr && (attr == "strip" || attr == "lstrip" || attr == "rstrip") {
				if p.isOp("(") {
					p.next()
					if args, _ := p.exprList(")"); len(args) == 0 {
						switch attr {
						case "strip":
							e = &pyExpr{Kind: exprStr, Line: e.Line, Str: strings.TrimSpace(e.Str), Runtime: e.Runtime}
						case "lstrip":
							e = &pyExpr{Kind: exprStr, Line: e.Line, Str: strings.TrimLeft(e.Str, " \t\r\n"), Runtime: e.Runtime}
						default:
							e = &pyExpr{Kind: exprStr, Line: e.Line, Str: strings.TrimRight(e.Str, " \t\r\n"), Runtime: e.Runtime}
						}
					}
				}
			} else {
				e = &pyExpr{Kind: exprUnknown, Line: e.Line}
			}
		case p.isOp("("):
			p.next()
			call := &pyExpr{Kind: exprCall, Line: e.Line, Name: e.Name}
			if e.Kind != exprName {
				call.Name = ""
			}
			for !p.isOp(")") && p.peek().Kind != tokEOF {
				if p.peek().Kind == tokName && p.toks[p.pos+1].Kind == tokOp && p.toks[p.pos+1].Text == "=" {
					name := p.next().Text
					p.next()
					call.KwNames = append(call.KwNames, name)
					call.KwArgs = append(call.KwArgs, p.expr())
				} else {
					call.Args = append(call.Args, p.expr())
				}
				if p.isOp(",") {
					p.next()
				} else if !p.isOp(")") {
					p.next() // generator expressions and other unsupported syntax
				}
			}
			p.next()
			e = call
		case p.isOp("["):
			p.next()
			p.exprList("]")
			if e.Kind == exprName {
				// A subscripted name (Generic[T], List[str]) keeps its name for bases.
				e = &pyExpr{Kind: exprCall, Line: e.Line, Name: e.Name}
			} else {
				e = &pyExpr{Kind: exprUnknown, Line: e.Line}
			}
		default:
			if e.Kind == exprStr && p.isOp("%") {
				// '%' formatting: runtime value.
				p.next()
				p.atom()
				return &pyExpr{Kind: exprStr, Line: e.Line, Str: e.Str, Runtime: true}
			}
			return e
		}
	}
}

// exprList parses comma-separated expressions up to the closing bracket.
func (p *pyParser) exprList(closer string) ([]*pyExpr, bool) {
	var out []*pyExpr
	trailing := false
	for !p.isOp(closer) && p.peek().Kind != tokEOF {
		trailing = false
		out = append(out, p.expr())
		if p.isOp(",") {
			p.next()
			trailing = true
		} else if !p.isOp(closer) {
			p.next()
		}
	}
	p.next()
	return out, trailing
}

func (p *pyParser) dictOrSet(line int) *pyExpr {
	e := &pyExpr{Kind: exprDict, Line: line}
	isSet := false
	for !p.isOp("}") && p.peek().Kind != tokEOF {
		if p.isOp("**") {
			p.next()
			p.expr()
		} else {
			k := p.expr()
			if p.isOp(":") {
				p.next()
				e.Elems = append(e.Elems, k)
				e.Values = append(e.Values, p.expr())
			} else {
				isSet = true
				e.Elems = append(e.Elems, k)
				e.Values = append(e.Values, nil)
			}
		}
		if p.isOp(",") {
			p.next()
		} else if !p.isOp("}") {
			p.next()
		}
	}
	p.next()
	if isSet {
		e.Kind = exprList
		e.Values = nil
	}
	return e
}

// findEnvReads scans tokens for environment variable reads: os.environ["X"], os.environ.get("X"),
// os.getenv("X"), get_from_dict_or_env(values, "key", "X"[, default]), get_from_env("key", "X").
func findEnvReads(toks []pyTok) []envRead {
	var out []envRead
	isEnvName := func(s string) bool {
		if len(s) < 3 {
			return false
		}
		for i, c := range s {
			if !(c >= 'A' && c <= 'Z' || c == '_' || (i > 0 && c >= '0' && c <= '9')) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.Kind != tokName {
			continue
		}
		switch t.Text {
		case "environ":
			// environ["X"] or environ.get("X"[, default])
			if i+2 < len(toks) && toks[i+1].Text == "[" && toks[i+2].Kind == tokString && isEnvName(toks[i+2].Text) {
				out = append(out, envRead{Name: toks[i+2].Text})
			} else if i+4 < len(toks) && toks[i+1].Text == "." && toks[i+2].Text == "get" && toks[i+3].Text == "(" && toks[i+4].Kind == tokString && isEnvName(toks[i+4].Text) {
				out = append(out, envRead{Name: toks[i+4].Text, Optional: true})
			}
		case "getenv":
			if i+2 < len(toks) && toks[i+1].Text == "(" && toks[i+2].Kind == tokString && isEnvName(toks[i+2].Text) {
				out = append(out, envRead{Name: toks[i+2].Text, Optional: true})
			}
		case "get_from_dict_or_env", "get_from_env", "secret_from_env", "from_env":
			if i+1 >= len(toks) || toks[i+1].Text != "(" {
				continue
			}
			// Collect top-level arguments of the call.
			depth := 0
			var args [][]pyTok
			var cur []pyTok
			for j := i + 1; j < len(toks); j++ {
				u := toks[j]
				if u.Kind == tokOp && (u.Text == "(" || u.Text == "[" || u.Text == "{") {
					depth++
					if depth == 1 {
						continue
					}
				}
				if u.Kind == tokOp && (u.Text == ")" || u.Text == "]" || u.Text == "}") {
					depth--
					if depth == 0 {
						args = append(args, cur)
						break
					}
				}
				if depth == 1 && u.Kind == tokOp && u.Text == "," {
					args = append(args, cur)
					cur = nil
					continue
				}
				cur = append(cur, u)
			}
			optional := false
			for _, a := range args {
				if len(a) >= 2 && a[0].Kind == tokName && a[0].Text == "default" && a[1].Text == "=" {
					optional = true
				}
			}
			if t.Text == "get_from_dict_or_env" && len(args) >= 4 {
				optional = true
			}
			for _, a := range args {
				if len(a) == 1 && a[0].Kind == tokString && isEnvName(a[0].Text) {
					out = append(out, envRead{Name: a[0].Text, Optional: optional})
				}
			}
		}
	}
	return out
}
