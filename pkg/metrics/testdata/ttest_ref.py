"""Reference paired t-tests from scipy.stats.ttest_rel, run by the Go tests of pkg/metrics.

usage: ttest_ref.py IN.json OUT.json
IN:  [{"a": [float], "b": [float]}]
OUT: [{"t": float|null, "p": float|null}] (null for NaN)
"""
import json
import math
import sys

from scipy import stats


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    out = []
    for c in cases:
        r = stats.ttest_rel(c["a"], c["b"])
        out.append({"t": num(r.statistic), "p": num(r.pvalue)})
    with open(sys.argv[2], "w") as f:
        json.dump(out, f, allow_nan=True)


if __name__ == "__main__":
    main()
