#!/usr/bin/env python3
"""Writes the committed seed corpora of rated's fuzz targets (testdata/fuzz/<Target>/ in each
package) from real files: the embedded default benchmark, the Gemma-built Syn fixture
(pkg/train/testdata/syn-gemma3-270m), the shipped configs, the ToolBench queries, the crawl
fixtures, and, when scripts/setup has installed them, the encoder folders (tokenizer.json trimmed
to a few hundred tokens, rated.yaml, the head of an embedding cache).

Run from the repository root: python3 scripts/fuzz-seeds.py. docs/INPUTS.md lists the targets.
Go's corpus format: a "go test fuzz v1" line, then one Go literal per argument.
"""

import gzip
import io
import json
import os
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASSETS = os.environ.get("RATED_ASSETS", os.path.join(ROOT, ".rated"))


def go_literal(kind, data):
    """A Go literal of the bytes (kind "[]byte" or "string"), every byte outside printable ASCII
    escaped, so any content is representable."""
    if isinstance(data, str):
        data = data.encode()
    out = []
    for c in data:
        if c == 0x0A:
            out.append("\\n")
        elif c == 0x09:
            out.append("\\t")
        elif 0x20 <= c < 0x7F and c not in (0x22, 0x5C):
            out.append(chr(c))
        else:
            out.append("\\x%02x" % c)
    return '%s("%s")' % (kind, "".join(out))


def write(pkg, target, name, *args, kind="[]byte"):
    d = os.path.join(ROOT, pkg, "testdata", "fuzz", target)
    os.makedirs(d, exist_ok=True)
    body = "go test fuzz v1\n" + "".join(go_literal(kind, a) + "\n" for a in args)
    with open(os.path.join(d, name), "w") as f:
        f.write(body)


def read(*parts):
    with open(os.path.join(ROOT, *parts), "rb") as f:
        return f.read()


def lines(data, n):
    return b"".join(data.splitlines(True)[:n])


def bench_seeds():
    syn = "pkg/train/testdata/syn-gemma3-270m"
    for name, folder, split in (("syn-gemma3", syn, "train"), ("default", "pkg/defaultbench/data", "test")):
        corpus = lines(read(folder, "corpus.jsonl"), 15)
        ids = {json.loads(l)["_id"] for l in corpus.splitlines()}
        qrels = [l for l in read(folder, "qrels", split + ".tsv").splitlines()[1:] if l.split(b"\t")[1].decode() in ids][:20]
        qids = {l.split(b"\t")[0].decode() for l in qrels}
        queries = b"".join(l + b"\n" for l in read(folder, "queries.jsonl").splitlines() if json.loads(l)["_id"] in qids)
        tsv = b"query-id\tcorpus-id\tscore\n" + b"".join(l + b"\n" for l in qrels)
        write("pkg/bench", "FuzzReadBEIR", name, corpus, queries, tsv)
        write("pkg/bench", "FuzzReadBEIR", name + "-bom-crlf", b"\xef\xbb\xbf" + corpus, queries, tsv.replace(b"\n", b"\r\n"))


def catalog_seeds():
    write("pkg/catalog", "FuzzDecodeJSONL", "default", lines(read("pkg/defaultbench/data/catalog.jsonl"), 20))
    write("pkg/catalog", "FuzzDecodeJSONL", "synth-fixture", read("pkg/synth/testdata/catalog.jsonl"))


def tokenizer_seeds():
    common = set("the a to of and for in on with my me how what is send get weather email message calendar file search".split())
    for model in ("bge-small-en-v1.5", "all-minilm-l6-v2"):
        p = os.path.join(ASSETS, "models", model, "tokenizer.json")
        if not os.path.exists(p):
            print("skip tokenizer seeds: no", p)
            return
        t = json.load(open(p))
        vocab = t["model"]["vocab"]
        keep = [tok for tok, i in sorted(vocab.items(), key=lambda kv: kv[1])
                if i in (0, 100, 101, 102, 103) or 1000 <= i < 1200 or tok in common or (tok.startswith("##") and len(tok) == 3)]
        new = {tok: n for n, tok in enumerate(keep)}
        t["model"]["vocab"] = new
        for a in t.get("added_tokens", []):
            a["id"] = new.get(a["content"], a["id"])
        t["added_tokens"] = [a for a in t.get("added_tokens", []) if a["content"] in new]
        for st in t["post_processor"].get("special_tokens", {}).values():
            st["ids"] = [new[tok] for tok in st["tokens"]]
        if t.get("padding"):
            t["padding"]["pad_id"] = new[t["padding"]["pad_token"]]
        write("pkg/encode/tokenizer", "FuzzLoad", model + "-trimmed", json.dumps(t, ensure_ascii=False))


def encode_seeds():
    for model in ("bge-small-en-v1.5", "all-minilm-l6-v2"):
        p = os.path.join(ASSETS, "models", model, "rated.yaml")
        if os.path.exists(p):
            write("pkg/encode", "FuzzLoadConfig", model, open(p, "rb").read())
    write("pkg/encode", "FuzzLoadConfig", "dual-towers",
          b"name: dragon\nquery_model: query.onnx\ndoc_model: doc.onnx\ntokenizer: tokenizer.json\npooling: cls\nmax_length: 512\n")
    cache = os.path.join(ASSETS, "cache", "embeddings")
    if os.path.isdir(cache):
        for d in sorted(os.listdir(cache)):
            p = os.path.join(cache, d, "doc.bin")
            if os.path.exists(p):
                data = open(p, "rb").read()
                head = len(b"RATEDEMB1\n") + 4
                rec = 32 + 4 * 384
                write("pkg/encode", "FuzzEmbeddingCache", d[:20], data[:head + 2 * rec])
                write("pkg/encode", "FuzzEmbeddingCache", d[:20] + "-torn", data[:head + rec + 100])
                break


def crawl_seeds():
    n8n = "pkg/crawl/testdata/n8n/package/dist"
    write("pkg/crawl", "FuzzCrawlN8n", "fixture", read(n8n, "types/nodes.json"), read(n8n, "types/credentials.json"))
    for root, _, files in os.walk(os.path.join(ROOT, n8n, "nodes")):
        for f in files:
            write("pkg/crawl", "FuzzJSEndpoints", f, open(os.path.join(root, f), "rb").read())
    write("pkg/crawl", "FuzzParseSources", "pinned", read("configs/sources.yaml"))
    # Archives of the fixture trees, as the registries ship them.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        base = os.path.join(ROOT, "pkg/crawl/testdata/llamaindex/llama_index_tools_basea-1.0.0")
        for root, _, files in os.walk(base):
            for f in sorted(files):
                p = os.path.join(root, f)
                z.write(p, os.path.relpath(p, base))
    write("pkg/crawl", "FuzzLoadTreeZip", "llamaindex-wheel", buf.getvalue())
    buf = io.BytesIO()
    def fixed(ti):  # no time stamps or owners: the seed is the same on every run
        ti.mtime, ti.uid, ti.gid, ti.uname, ti.gname = 0, 0, 0, "", ""
        return ti
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(os.path.join(ROOT, "pkg/crawl/testdata/n8n/package"), arcname="package", filter=fixed)
    write("pkg/crawl", "FuzzLoadTreeTar", "n8n-tgz", gzip.compress(buf.getvalue(), compresslevel=9, mtime=0))
    # git ls-tree -r -l -z and git cat-file --batch output of a two-file tree.
    ls = (b"100644 blob 8f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b      12\tpkg/tools/weather.py\x00"
          b"120000 blob 1111111111111111111111111111111111111111       9\tpkg/link.py\x00"
          b"160000 commit 2222222222222222222222222222222222222222       -\tvendor/sub\x00"
          b"100644 blob 3333333333333333333333333333333333333333       2\tpkg/__init__.py\x00")
    cat = (b"8f1e2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b blob 12\nx = 'hello'\n\n"
           b"3333333333333333333333333333333333333333 missing\n")
    write("pkg/crawl", "FuzzGitListing", "two-blobs", ls, cat)
    # Sizes that used to panic catFileBlobs (TestCatFileSizeOutOfRange).
    write("pkg/crawl", "FuzzGitListing", "negative-size", b"100644 blob abc      -5\tpkg/a.py\x00", b"abc blob -5\nxx\n")
    write("pkg/crawl", "FuzzGitListing", "overflowing-size", b"100644 blob abc       1\tpkg/a.py\x00", b"abc blob 9223372036854775807\nxx\n")


def dynamic_seeds():
    for f in sorted(os.listdir(os.path.join(ROOT, "configs"))):
        if f.endswith(".yaml") and f not in ("llm.yaml", "sources.yaml"):
            write("pkg/evaldynamic", "FuzzLoadConfig", f, read("configs", f))


def synth_seeds():
    syn = "pkg/train/testdata/syn-gemma3-270m"
    corpus = [json.loads(l) for l in read(syn, "corpus.jsonl").splitlines()[:3]]
    queries = {}
    for l in read(syn, "qrels", "train.tsv").splitlines()[1:]:
        q, d, _ = l.decode().split("\t")
        queries.setdefault(d, []).append(q)
    text = {json.loads(l)["_id"]: json.loads(l)["text"] for l in read(syn, "queries.jsonl").splitlines()}
    records = []
    for doc in corpus:
        qs = [text[q] for q in queries.get(doc["_id"], [])][:5]
        answer = "1. " + "\n".join("%d. %s" % (i + 1, q) if i else q for i, q in enumerate(qs))
        write("pkg/synth", "FuzzParseQueries", doc["_id"].replace("/", "_")[:40], answer, kind="string")
        records.append({"key": "syn@0123456789ab/n10/" + doc["_id"], "ok": True, "tool_id": doc["_id"], "raw": answer,
                        "queries": qs, "attempts": 1, "seed": 7, "elapsed_ms": 812})
    journal = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    write("pkg/synth", "FuzzOpenJournal", "syn-gemma3", journal)
    write("pkg/synth", "FuzzOpenJournal", "syn-gemma3-torn", journal + journal.splitlines()[0][:57])
    for i, s in enumerate(["0.9", "Score: 0.85", "0.2\n", "1", "85%", "4/5", "The tool matches: 0.7"]):
        write("pkg/synth", "FuzzParseScore", "score-%d" % i, s, kind="string")
    real = lines(read("data/toolbench/queries.jsonl"), 5)
    write("pkg/synth", "FuzzParseRealQueries", "toolbench", real)
    q = json.loads(real.splitlines()[0])
    audit = ("key,query_id,query,tool_id,tool_name,tool_description,validator_score,validator_keep,human_label\n"
             'real@0123456789ab/%s/%s,%s,"%s",%s,%s,"%s",0.9,1,1\n' % (q["query_id"], corpus[0]["_id"], q["query_id"],
                                                                       q["query"].replace('"', '""'), corpus[0]["_id"],
                                                                       corpus[0]["title"], corpus[0]["text"].replace('"', '""')))
    write("pkg/synth", "FuzzReadAuditAgreement", "labelled", audit)
    write("pkg/synth", "FuzzLoadLLMConfig", "llm", read("configs", "llm.yaml"))


def train_seeds():
    write("pkg/train", "FuzzReadNegatives", "syn-gemma3", lines(read("pkg/train/testdata/syn-gemma3-270m/negatives.jsonl"), 5))
    p = os.path.join(ASSETS, "train", "all-minilm-l6-v2-test", "artifacts.json")
    if os.path.exists(p):
        a = json.load(open(p))
        a["parameters"] = a.get("parameters", [])[:3]
        a["source_model"] = "model.onnx"
        write("pkg/train", "FuzzLoadArtifacts", "minilm-test", json.dumps(a))
    write("pkg/reproduce", "FuzzParseExpected", "default", read("pkg/reproduce/expected/default.json"))


if __name__ == "__main__":
    bench_seeds()
    catalog_seeds()
    tokenizer_seeds()
    encode_seeds()
    crawl_seeds()
    dynamic_seeds()
    synth_seeds()
    train_seeds()
