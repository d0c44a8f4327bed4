#!/usr/bin/env python3
"""Builds the catalog-sized benchmark of docs/BENCHMARKS.md ("Encoder work on a 2.5k-tool
catalog"): the embedded default benchmark (316 tools, its queries and qrels) with tools of a
crawled catalog (`rated crawl --out CATALOG`) added as distractors, in the crawl's order, until
the corpus holds SIZE tools. Writes DIR in the BEIR layout with catalog.jsonl, so the prior sees
every tool's platform and tags.

usage: scripts/catalog-bench.py CATALOG DIR [SIZE=2479]
"""
import json
import os
import shutil
import sys

catalog, out = sys.argv[1], sys.argv[2]
size = int(sys.argv[3]) if len(sys.argv) > 3 else 2479
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pkg", "defaultbench", "data")


def read(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


corpus = read(os.path.join(root, "corpus.jsonl"))
tools = read(os.path.join(root, "catalog.jsonl"))
have = {d["_id"] for d in corpus}
for t in read(catalog):
    if len(corpus) >= size:
        break
    if t["id"] in have or not t.get("description"):
        continue
    have.add(t["id"])
    t.pop("prior", None)
    tools.append(t)
    corpus.append({"_id": t["id"], "title": t["name"], "text": t["description"], "metadata": {"platform": t["platform"]}})
if len(corpus) < size:
    sys.exit(f"{catalog}: only {len(corpus)} tools with a description, want {size}")
os.makedirs(out, exist_ok=True)
for name, rows in (("corpus.jsonl", corpus), ("catalog.jsonl", tools)):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
shutil.copy(os.path.join(root, "queries.jsonl"), os.path.join(out, "queries.jsonl"))
shutil.copytree(os.path.join(root, "qrels"), os.path.join(out, "qrels"), dirs_exist_ok=True)
print(f"{out}: {len(corpus)} tools, {len(tools)} catalog records")
