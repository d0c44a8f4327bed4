"""Reference IR measures from pytrec_eval (trec_eval 9), run by the Go tests of pkg/metrics.

usage: trec_ref.py IN.json OUT.json
IN:  {"qrels": {qid: {docid: grade}}, "run": {qid: {docid: score}}, "measures": [str]}
OUT: {qid: {measure: value}} for every query pytrec_eval evaluates
"""
import json
import sys

import pytrec_eval


def main():
    with open(sys.argv[1]) as f:
        inp = json.load(f)
    evaluator = pytrec_eval.RelevanceEvaluator(inp["qrels"], set(inp["measures"]))
    with open(sys.argv[2], "w") as f:
        json.dump(evaluator.evaluate(inp["run"]), f)


if __name__ == "__main__":
    main()
