"""Recomputes every mean and per-query value of an eval offline output folder with pytrec_eval.

usage: check_table.py OUT   (run from the repository root with the reference venv's python)
Reads OUT/table1.json and every OUT/runs/*.trec with check_outputs.py and prints the largest
difference between rated's values and pytrec_eval's.
"""
import json
import os
import re
import subprocess
import sys


def main():
    out = sys.argv[1]
    with open(f"{out}/table1.json") as f:
        t = json.load(f)
    names = [f[: -len(".trec")] for f in sorted(os.listdir(f"{out}/runs"))]
    here = os.path.dirname(os.path.abspath(__file__))
    ref = json.loads(subprocess.check_output([sys.executable, os.path.join(here, "check_outputs.py"), out, t["split"]] + names))
    worst, n = 0.0, 0
    for s in t["systems"]:
        r = ref[re.sub(r"[^A-Za-z0-9._-]", "_", s["name"])]  # the run file name (RunFileName)
        for m, te in zip(t["measures"], t["trec_eval"]):
            if not te:
                continue
            worst, n = max(worst, abs(s["mean"][m] - r["mean"][te])), n + 1
            for q in s["per_query"]:
                worst, n = max(worst, abs(q["values"][m] - r["per_query"][q["query_id"]][te])), n + 1
    print(f"{len(t['systems'])} systems, {n} values (means and per-query) vs pytrec_eval on the written files: largest difference {worst:.3g}")
    if worst > 1e-6:
        sys.exit(1)


if __name__ == "__main__":
    main()
