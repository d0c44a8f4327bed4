"""Recomputes Table 1 from the files `rated eval offline` wrote, with pytrec_eval and scipy.

usage: check_outputs.py OUT SPLIT NAME...
Reads OUT/qrels.SPLIT.trec and OUT/runs/NAME.trec (standard TREC formats, parsed here) and the
trec_eval names of the measures from OUT/table1.json, evaluates every query of the qrels (a query missing from a run scores 0, as trec_eval -c), and prints JSON:
{NAME: {"mean": {measure: value}, "per_query": {qid: {measure: value}}}} plus, for each NAME
after the first, scipy's paired t-test p of recip_rank against the first NAME ("p_ttest_rr").
"""
import json
import sys

import pytrec_eval
from scipy import stats



def measures(out):
    """pytrec_eval measure specs (recip_rank, map, P.5, ndcg_cut.10) of table1.json's trec_eval names."""
    with open(f"{out}/table1.json") as f:
        names = [n for n in json.load(f)["trec_eval"] if n]
    specs = set()
    for n in names:
        family, _, k = n.rpartition("_")
        specs.add(f"{family}.{k}" if k.isdigit() else n)
    return specs


def read_qrels(path):
    qrels = {}
    with open(path) as f:
        for line in f:
            qid, _, doc, grade = line.split()
            qrels.setdefault(qid, {})[doc] = int(grade)
    return qrels


def read_run(path):
    run = {}
    with open(path) as f:
        for line in f:
            qid, _, doc, _rank, score, _tag = line.split()
            run.setdefault(qid, {})[doc] = float(score)
    return run


def main():
    out, split, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    qrels = read_qrels(f"{out}/qrels.{split}.trec")
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures(out))
    result = {}
    for name in names:
        per = evaluator.evaluate(read_run(f"{out}/runs/{name}.trec"))
        keys = sorted(next(iter(per.values())).keys()) if per else []
        full = {q: {k: per.get(q, {}).get(k, 0.0) for k in keys} for q in qrels}
        mean = {k: sum(v[k] for v in full.values()) / len(full) for k in keys}
        result[name] = {"mean": mean, "per_query": full}
    base = names[0]
    qids = sorted(qrels)
    for name in names[1:]:
        a = [result[name]["per_query"][q]["recip_rank"] for q in qids]
        b = [result[base]["per_query"][q]["recip_rank"] for q in qids]
        p = float(stats.ttest_rel(a, b).pvalue)
        result[name]["p_ttest_rr"] = None if p != p else p
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
