"""Reading Retry's decision logs for the fallback replays (fallback-stopping.py, fallback-plans.py).

Retry (k) never learns, so its log is a faithful record of the candidates of every step and of
the outcomes of the calls it made. Only the standard library is used.
"""
import collections
import glob
import gzip
import json
import os
import sys


def records(directory):
    """Yields (run, path, line number, record) for every complete line of the directory's logs,
    a run being a file's name without its sequence suffix. Exits naming the file and line on a
    line that is not JSON, a log that is not Retry's, or an outcome of an unknown decision."""
    files = sorted(glob.glob(os.path.join(directory, "*.jsonl")))
    if not files:
        sys.exit(f"{directory}: no decision-log files (*.jsonl)")
    for path in files:
        run = os.path.basename(path).rsplit("-", 1)[0]
        known = set()
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.endswith("\n"):
                    break  # a torn last line (docs/DECISION-LOG.md)
                try:
                    r = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{lineno}: {e}")
                if r["kind"] == "decision":
                    if "Retry" not in r["policy"]:
                        sys.exit(f"{path}:{lineno}: policy {r['policy']!r}: replay needs Retry's log (it never learns)")
                    known.add(r["id"])
                elif r["id"] not in known:
                    sys.exit(f"{path}:{lineno}: outcome of unknown decision {r['id']!r}")
                yield run, path, lineno, r


def open_text(path):
    """Opens a UTF-8 text file, gunzipping a .gz."""
    return gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz") else open(path, encoding="utf-8")


def qrels(path):
    """Returns {query id: set of relevant tool ids} from a BEIR qrels TSV (optionally .gz),
    exiting with the file and line of a malformed row."""
    rel = collections.defaultdict(set)
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and parts[0] == "query-id":
                continue
            if len(parts) != 3:
                sys.exit(f"{path}:{lineno}: want query-id, corpus-id, score separated by tabs")
            try:
                score = float(parts[2])
            except ValueError:
                sys.exit(f"{path}:{lineno}: score {parts[2]!r} is not a number")
            if score > 0:
                rel[parts[0]].add(parts[1])
    return rel
