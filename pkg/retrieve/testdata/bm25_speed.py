"""Times rank-bm25's BM25Okapi on the data of TestWriteBM25SpeedData (docs/BENCHMARKS.md, offline section).

usage: bm25_speed.py DATA.json [NQUERIES]
Prints the index time and the per-query time of get_scores plus a top-100 argsort.
"""
import json
import re
import sys
import time

import numpy as np
from rank_bm25 import BM25Okapi


def tokenize(text):
    return re.findall(r"[^\W_]+", text.lower())


def main():
    with open(sys.argv[1]) as f:
        data = json.load(f)
    nq = int(sys.argv[2]) if len(sys.argv) > 2 else len(data["queries"])
    t0 = time.perf_counter()
    bm = BM25Okapi([tokenize(d) for d in data["docs"]])
    t1 = time.perf_counter()
    for q in data["queries"][:nq]:
        scores = bm.get_scores(tokenize(q))
        np.argsort(-scores, kind="stable")[:100]
    t2 = time.perf_counter()
    per = (t2 - t1) / nq
    print(f"rank-bm25: index {len(data['docs'])} docs {t1 - t0:.3f} s; {nq} queries {t2 - t1:.2f} s "
          f"({per * 1e3:.2f} ms/query, {per * len(data['queries']):.1f} s projected for {len(data['queries'])})")


if __name__ == "__main__":
    main()
