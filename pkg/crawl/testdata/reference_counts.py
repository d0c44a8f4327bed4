"""Independent reference for the crawl integration test.

Counts the tools of the pinned catalog archives with Python's own parsers (json, tarfile,
zipfile, ast) — a separate implementation of the counting rules in docs/CRAWL.md, so the Go
crawler is checked against something other than itself. Nothing crawled is imported or run.

usage: python reference_counts.py SOURCES_DIR  -> JSON {platform: {"tools": n, ...}}
"""

import ast
import io
import json
import os
import re
import sys
import tarfile
import zipfile


def mkid(*parts):
    return "/".join(p.strip().lower().replace(" ", "-") for p in parts)


# ---------------------------------------------------------------- n8n
def version_ok(cond, v):
    if isinstance(cond, (int, float)):
        return cond == v
    c = cond.get("_cnd") if isinstance(cond, dict) else None
    if not c:
        return False
    for op, x in c.items():
        if op == "between":
            if not (x["from"] <= v <= x["to"]):
                return False
            continue
        ok = {"eq": v == x, "not": v != x, "gte": v >= x, "lte": v <= x, "gt": v > x, "lt": v < x}.get(op, False)
        if not ok:
            return False
    return True


def shown(p, v, res=None, op=None):
    d = p.get("displayOptions") or {}
    for key, conds in (d.get("show") or {}).items():
        if key == "@version" and not any(version_ok(c, v) for c in conds):
            return False
        if key == "resource" and res is not None and res not in [str(c) for c in conds]:
            return False
        if key == "operation" and op is not None and op not in [str(c) for c in conds]:
            return False
    for key, conds in (d.get("hide") or {}).items():
        if key == "@version" and any(version_ok(c, v) for c in conds):
            return False
        if key == "resource" and res is not None and res in [str(c) for c in conds]:
            return False
    return True


def latest(node):
    vs = node["version"] if isinstance(node["version"], list) else [node["version"]]
    if node.get("defaultVersion") in vs:
        return node["defaultVersion"]
    return max(vs)


def n8n_ids(tgz):
    with tarfile.open(tgz) as tf:
        nodes = json.load(tf.extractfile("package/dist/types/nodes.json"))
    best = {}
    for n in nodes:
        if not isinstance(n.get("group"), list):
            continue
        if n["name"] not in best or latest(n) > latest(best[n["name"]]):
            best[n["name"]] = n
    ids = set()
    for name, n in best.items():
        if n.get("hidden") or "trigger" in n["group"] or name.endswith("Trigger"):
            continue
        v = latest(n)
        props = n.get("properties", [])
        resources = [str(o["value"]) for p in props if p.get("name") == "resource" and p.get("type") == "options" and shown(p, v)
                     for o in p.get("options", []) if "value" in o]
        found = set()
        for r in resources or [None]:
            for p in props:
                if p.get("name") != "operation" or p.get("type") != "options" or not shown(p, v, r):
                    continue
                for o in p.get("options", []):
                    if "value" in o:
                        found.add(str(o["value"]) if r is None else r + "." + str(o["value"]))
        if not found:
            found = {name}
        ids |= {mkid("n8n", name, f) for f in found}
    return ids


# ---------------------------------------------------------------- Python packages
def py_files(archive):
    """Yields (path, source) of the .py files of a wheel or sdist."""
    if archive.endswith(".whl"):
        with zipfile.ZipFile(archive) as z:
            for n in z.namelist():
                if n.endswith(".py"):
                    yield n, z.read(n)
    else:
        with tarfile.open(archive) as tf:
            for m in tf.getmembers():
                if m.isfile() and m.name.endswith(".py"):
                    yield m.name, tf.extractfile(m).read()


class PyIndex:
    def __init__(self):
        self.classes = {}  # simple name -> list of (module, ClassDef, imports, consts)

    def add(self, module, src):
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            return
        imports, consts = {}, {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    imports[a.asname or a.name] = a.name
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                consts[node.targets[0].id] = node.value
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, []).append((module, node, imports, consts))

    def base_names(self, entry):
        module, node, imports, _ = entry
        out = []
        for b in node.bases:
            if isinstance(b, ast.Subscript):
                b = b.value
            name = b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None
            if name:
                out.append(imports.get(name, name))
        return out

    def lookup(self, name, module):
        cands = self.classes.get(name, [])
        for c in cands:
            if c[0] == module:
                return c
        return cands[0] if cands else None

    def mro(self, entry, depth=0):
        out = [entry]
        if depth > 20:
            return out
        for b in self.base_names(entry):
            parent = self.lookup(b, entry[0])
            if parent and parent is not entry:
                out += [x for x in self.mro(parent, depth + 1) if x not in out]
        return out

    def all_base_names(self, entry):
        return {b for e in self.mro(entry) for b in self.base_names(e)}

    def attr(self, entry, name):
        for e in self.mro(entry):
            for stmt in e[1].body:
                target = None
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                    target = stmt.target.id
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    target = stmt.targets[0].id
                if target == name:
                    return e, stmt.value
        return None, None

    def methods(self, entry):
        return {s.name for e in self.mro(entry) for s in e[1].body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}


def static_str(value, consts, depth=0):
    """The value of a string expression, or None when it is only known at run time."""
    if depth > 10 or value is None:
        return None
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.JoinedStr):
        if any(isinstance(v, ast.FormattedValue) for v in value.values):
            return None
        return "".join(v.value for v in value.values)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        a, b = static_str(value.left, consts, depth + 1), static_str(value.right, consts, depth + 1)
        return None if a is None or b is None else a + b
    if isinstance(value, ast.Name) and value.id in consts:
        return static_str(consts[value.id], consts, depth + 1)
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Field":
        for kw in value.keywords:
            if kw.arg == "default":
                return static_str(kw.value, consts, depth + 1)
        if value.args:
            return static_str(value.args[0], consts, depth + 1)
    return None


def module_of(path, top):
    i = path.find(top + "/")
    if i < 0 or "/tests/" in path:
        return None
    mod = path[i:-3].replace("/", ".")
    return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod


def is_alias(ix, entry):
    _, node, _, _ = entry
    body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) and not isinstance(s, ast.Pass)]
    if body or len(node.bases) != 1:
        return False
    parent = ix.lookup(ix.base_names(entry)[0], entry[0])
    return parent is not None and ix.attr(parent, "name")[1] is not None


def langchain_ids(whl):
    ix, dicts = PyIndex(), []
    for path, src in py_files(whl):
        mod = module_of(path, "langchain_community")
        if not mod:
            continue
        ix.add(mod, src)
        if mod.startswith("langchain_community.agent_toolkits."):
            try:
                tree = ast.parse(src)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Dict):
                    keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                    if "mode" in keys and "name" in keys and "description" in keys:
                        name = node.values[keys.index("name")]
                        if isinstance(name, ast.Constant) and name.value.strip():
                            dicts.append(mkid("langchain", mod.split(".")[2], name.value.strip()))
    ids = set(dicts)
    for entries in ix.classes.values():
        for e in entries:
            if not e[0].startswith("langchain_community.tools."):
                continue
            if not ix.all_base_names(e) & {"BaseTool", "StructuredTool", "Tool"} or is_alias(ix, e):
                continue
            owner, value = ix.attr(e, "name")
            if value is None:
                continue
            name = static_str(value, owner[3])
            if name is None:
                name = e[1].name
            if name.strip():
                ids.add(mkid("langchain", e[0].split(".")[2], name.strip()))
    return ids


def crewai_ids(sdist):
    ix, specs = PyIndex(), set()
    with tarfile.open(sdist) as tf:
        for m in tf.getmembers():
            if m.name.endswith("/tool.specs.json"):
                specs = {t["name"]: t for t in json.load(tf.extractfile(m))["tools"]}
    for path, src in py_files(sdist):
        mod = module_of(path, "crewai_tools")
        if mod:
            ix.add(mod, src)
    ids = set()
    for entries in ix.classes.values():
        for e in entries:
            parts = e[0].split(".")
            if parts[1] not in ("tools", "aws") or len(parts) < 3 or "BaseTool" not in ix.all_base_names(e):
                continue
            group = parts[2] if parts[1] == "tools" else "aws_" + parts[2]
            _, dep = ix.attr(e, "is_deprecated_alias")
            if isinstance(dep, ast.Constant) and dep.value is True:
                continue
            owner, value = ix.attr(e, "name")
            if value is None:
                if e[1].name not in specs:
                    continue
                name = specs[e[1].name].get("humanized_name") or e[1].name
            else:
                name = static_str(value, owner[3])
                name = e[1].name if name is None else name
            if name.strip():
                ids.add(mkid("crewai", group, name.strip()))
    return ids


def llamaindex_ids(wheels):
    ix, pkg_of = PyIndex(), {}
    for whl in wheels:
        pkg = re.sub(r"-\d.*$", "", os.path.basename(whl))
        for path, src in py_files(whl):
            mod = module_of(path, "llama_index")
            if mod:
                pkg_of[mod] = pkg
                ix.add(mod, src)
    ids = set()
    for entries in ix.classes.values():
        for e in entries:
            if "BaseToolSpec" not in ix.all_base_names(e):
                continue
            _, sf = ix.attr(e, "spec_functions")
            if not isinstance(sf, (ast.List, ast.Tuple)):
                continue
            methods = ix.methods(e)
            short = pkg_of[e[0]].lower().replace("llama-index-tools-", "")
            for el in sf.elts:
                if isinstance(el, (ast.Tuple, ast.List)) and el.elts:
                    el = el.elts[0]
                if isinstance(el, ast.Constant) and el.value in methods:
                    ids.add(mkid("llamaindex", short + ":" + e[1].name, el.value))
    return ids


def main(src):
    npm, pypi = os.path.join(src, "npm"), os.path.join(src, "pypi")
    n8n = set()
    for f in sorted(os.listdir(npm)):
        n8n |= n8n_ids(os.path.join(npm, f))
    lc = [os.path.join(pypi, f) for f in os.listdir(pypi) if f.startswith("langchain-community-")]
    cw = [os.path.join(pypi, f) for f in os.listdir(pypi) if f.startswith("crewai-tools-")]
    li = sorted(os.path.join(pypi, f) for f in os.listdir(pypi) if f.startswith("llama-index-tools-"))
    out = {
        "n8n": sorted(n8n),
        "langchain": sorted(langchain_ids(lc[0])),
        "crewai": sorted(crewai_ids(cw[0])),
        "llamaindex": sorted(llamaindex_ids(li)),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
