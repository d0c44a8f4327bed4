#!/usr/bin/env python3
"""Counts the tokens an encoder is fed for a benchmark under the former and the current batching
of pkg/encode (docs/BENCHMARKS.md, "Encoder work on a 2.5k-tool catalog"): real tokens, padded
tokens (rows x longest row) and attention work (rows x longest^2), for the corpus texts, the
prior's name and description texts, and the test queries, with the model's tokenizer.json.

former: retrieve.NewDense passed chunks of 256 documents; each call sorted its texts by character
length and ran batches of 32; the queries went in one such call; the prior embedded each
(name, description) pair in its own call. ideal: no padding at all (every text alone), the
bound of any batching scheme.
current: one call per corpus; all texts tokenized, sorted by token count, batches of at most
BATCH rows and BATCH_TOKENS padded tokens; the prior's texts in one such call.

usage: padding-bound.py BENCH_DIR MODEL_DIR [BATCH_TOKENS=2048 BATCH=64]
"""
import json
import os
import re
import sys

from tokenizers import Tokenizer

bench, model = sys.argv[1], sys.argv[2]
budget = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
rows = int(sys.argv[4]) if len(sys.argv) > 4 else 64
cfg = {}
for line in open(os.path.join(model, "rated.yaml"), encoding="utf-8"):
    m = re.match(r'^(\w+):\s*"?(.*?)"?\s*$', line)
    if m:
        cfg[m.group(1)] = m.group(2)
maxlen = int(cfg["max_length"])
tok = Tokenizer.from_file(os.path.join(model, "tokenizer.json"))
tok.enable_truncation(maxlen)
tok.no_padding()


def read(name):
    with open(os.path.join(bench, name), encoding="utf-8") as f:
        return [json.loads(l) for l in f if l.strip()]


def lengths(texts):
    return [len(e.ids) for e in tok.encode_batch(texts)] if texts else []


def cost(batches):
    real = sum(sum(b) for b in batches)
    padded = sum(len(b) * max(b) for b in batches)
    attn = sum(len(b) * max(b) ** 2 for b in batches)
    return real, padded, attn


def former(texts, chunk=256):
    out = []
    for c in range(0, len(texts), chunk):
        part = sorted(texts[c:c + chunk], key=len, reverse=True)
        ls = lengths(part)
        out += [ls[i:i + 32] for i in range(0, len(ls), 32)]
    return out


def current(texts):
    ls = sorted(lengths(texts), reverse=True)
    out, s = [], 0
    while s < len(ls):
        e = s + 1
        while e < len(ls) and e - s < rows and (e - s + 1) * max(ls[s], 1) <= budget:
            e += 1
        out.append(ls[s:e])
        s = e
    return out


def words(name):
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", name)
    return " ".join(p.lower() for p in parts)


corpus = read("corpus.jsonl")
docs = [cfg.get("doc_prefix", "") + (d["title"] + ": " + d["text"] if d["title"] and d["text"] else d["title"] or d["text"]) for d in corpus]
names = [cfg.get("doc_prefix", "") + words(d["title"]) for d in corpus]
descs = [cfg.get("doc_prefix", "") + d["text"] for d in corpus]
qrels = {l.split("\t")[0] for l in open(os.path.join(bench, "qrels", "test.tsv"), encoding="utf-8").read().splitlines()[1:]}
queries = [cfg.get("query_prefix", "") + q["text"] for q in read("queries.jsonl") if q["_id"] in qrels]

rowsout = {
    "corpus": (former(docs), current(docs)),
    "prior": ([lengths([a, b]) for a, b in zip(names, descs)], current(list(dict.fromkeys(names + descs)))),
    "queries": (former(queries, len(queries)), current(queries)),
}
print(f"{model}: budget {budget}, batch {rows}")
print("part | former padded / attention | current padded / attention | ideal (no padding) tokens / attention | former/current padded, attention | former/ideal padded, attention")
tot = [0] * 6
for part, (a, b) in rowsout.items():
    ca, cb = cost(a), cost(b)
    ci = cost([[l] for bt in b for l in bt])
    for i, v in enumerate((ca[1], ca[2], cb[1], cb[2], ci[1], ci[2])):
        tot[i] += v
    print(f"{part} | {ca[1]} / {ca[2]} | {cb[1]} / {cb[2]} | {ci[1]} / {ci[2]} | {ca[1] / cb[1]:.2f}, {ca[2] / cb[2]:.2f} | {ca[1] / ci[1]:.2f}, {ca[2] / ci[2]:.2f}")
print(f"all | {tot[0]} / {tot[1]} | {tot[2]} / {tot[3]} | {tot[4]} / {tot[5]} | {tot[0] / tot[2]:.2f}, {tot[1] / tot[3]:.2f} | {tot[0] / tot[4]:.2f}, {tot[1] / tot[5]:.2f}")
