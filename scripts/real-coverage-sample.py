#!/usr/bin/env python3
"""How many ToolBench queries can EcoAgent-Real keep at all? (docs/BUILD-BENCH.md, "Real coverage")

The Real protocol keeps a query only when one of its top-k tools over the crawled catalog, above
the retrieval threshold, serves it; no validator can keep more. This samples ToolBench queries at
random, lays them out as a BEIR folder over the release's 4,002-tool corpus so that `rated eval
offline` writes each query's top-k (its TREC run), turns that run into a CSV for a person to
label (human_label: 1 when the tool serves the request or a substantial part of it), and from
the labelled CSV reports the share of queries with a serving candidate, with its Wilson 95%
interval, and what it means for the 765 queries.

  real-coverage-sample.py prepare --queries data/toolbench/queries.jsonl --corpus data/ecoagent/real/corpus.jsonl.gz --n 40 --seed 20261201 --out DIR
  rated eval offline --bench DIR --split test --retrievers dense:bge-small-en-v1.5 --baseline dense:bge-small-en-v1.5 --depth 5 --out DIR/eval
  real-coverage-sample.py csv --bench DIR --run DIR/eval/runs/dense_bge-small-en-v1.5.trec --out labels.csv
  real-coverage-sample.py summary --labels labels.csv --threshold 0.6 --pool 765
  real-coverage-sample.py bench --labels labels.csv --corpus data/ecoagent/real/corpus.jsonl.gz --out DIR2

`bench` writes the labelled queries with a serving tool as a BEIR test split (qrels from the hand
labels) over the same corpus: a small Real test whose labels a person gave.
"""
import argparse
import collections
import csv
import gzip
import json
import math
import os
import random
import shutil
import sys


def opener(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def copy_corpus(corpus, out):
    """Starts the BEIR folder out: its qrels/ folder and the corpus, decompressed."""
    os.makedirs(os.path.join(out, "qrels"), exist_ok=True)
    with opener(corpus) as src, open(os.path.join(out, "corpus.jsonl"), "w", encoding="utf-8") as dst:
        shutil.copyfileobj(src, dst)


def prepare(a):
    with opener(a.queries) as f:
        queries = [json.loads(line) for line in f if line.strip()]
    sample = random.Random(a.seed).sample(queries, a.n)
    copy_corpus(a.corpus, a.out)
    with open(os.path.join(a.out, "corpus.jsonl"), encoding="utf-8") as f:
        first = json.loads(f.readline())["_id"]
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as q, \
            open(os.path.join(a.out, "qrels", "test.tsv"), "w", encoding="utf-8") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for s in sample:
            qid = f"{s['group']}-{s['query_id']}"
            q.write(json.dumps({"_id": qid, "text": s["query"]}) + "\n")
            # eval offline needs a judgement per query; the run, not the score, is what is used
            r.write(f"{qid}\t{first}\t1\n")
    print(f"wrote {a.n} queries (seed {a.seed}) to {a.out}")


def to_csv(a):
    with open(os.path.join(a.bench, "queries.jsonl"), encoding="utf-8") as f:
        queries = {d["_id"]: d["text"] for d in map(json.loads, f)}
    with open(os.path.join(a.bench, "corpus.jsonl"), encoding="utf-8") as f:
        corpus = {d["_id"]: d for d in map(json.loads, f)}
    with open(a.out, "w", newline="", encoding="utf-8") as out, open(a.run, encoding="utf-8") as run:
        w = csv.writer(out)
        w.writerow(["query_id", "query", "rank", "score", "tool_id", "tool_title", "tool_text", "human_label"])
        for line in run:
            qid, _, doc, rank, score, _ = line.split()
            d = corpus[doc]
            w.writerow([qid, queries[qid], rank, score, doc, d.get("title", ""), d.get("text", ""), ""])


def wilson(k, n, z=1.96):
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def read_labels(path):
    """The labelled rows of path, each human_label checked (an error names the file and line)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for i, row in enumerate(rows, start=2):
        if row["human_label"] not in ("0", "1"):
            sys.exit(f"{path}:{i}: human_label {row['human_label']!r}: must be 0 or 1")
    return rows


def summary(a):
    served = collections.defaultdict(bool)
    for row in read_labels(a.labels):
        served[row["query_id"]] |= row["human_label"] == "1" and float(row["score"]) >= a.threshold
    n, k = len(served), sum(served.values())
    lo, hi = wilson(k, n)
    print(json.dumps({"queries": n, "threshold": a.threshold, "served": k, "share": k / n,
                      "wilson95": [lo, hi], "pool": a.pool, "expected_in_pool": k / n * a.pool,
                      "expected_in_pool_wilson95": [lo * a.pool, hi * a.pool]}, indent=1))


def bench(a):
    served = collections.OrderedDict()
    texts = {}
    for row in read_labels(a.labels):
        texts[row["query_id"]] = row["query"]
        if row["human_label"] == "1":
            served.setdefault(row["query_id"], []).append(row["tool_id"])
    copy_corpus(a.corpus, a.out)
    with open(os.path.join(a.out, "queries.jsonl"), "w", encoding="utf-8") as q, \
            open(os.path.join(a.out, "qrels", "test.tsv"), "w", encoding="utf-8") as r:
        r.write("query-id\tcorpus-id\tscore\n")
        for qid, tools in served.items():
            q.write(json.dumps({"_id": qid, "text": texts[qid]}) + "\n")
            for t in tools:
                r.write(f"{qid}\t{t}\t1\n")
    print(f"wrote {len(served)} queries, {sum(map(len, served.values()))} pairs to {a.out}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("prepare")
    s.add_argument("--queries", required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("--n", type=int, default=40)
    s.add_argument("--seed", type=int, default=20261201)
    s.add_argument("--out", required=True)
    s = sub.add_parser("csv")
    s.add_argument("--bench", required=True)
    s.add_argument("--run", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("summary")
    s.add_argument("--labels", required=True)
    s.add_argument("--threshold", type=float, default=0.6)
    s.add_argument("--pool", type=int, default=765)
    s = sub.add_parser("bench")
    s.add_argument("--labels", required=True)
    s.add_argument("--corpus", required=True)
    s.add_argument("--out", required=True)
    a = p.parse_args()
    {"prepare": prepare, "csv": to_csv, "summary": summary, "bench": bench}[a.cmd](a)


if __name__ == "__main__":
    main()
