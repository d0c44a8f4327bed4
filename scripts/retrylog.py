"""Reading Retry's decision logs for the fallback replays (fallback-stopping.py, fallback-plans.py).

Retry (k) never learns, so its log is a faithful record of the candidates of every step and of
the outcomes of the calls it made. Only the standard library is used.
"""
import glob
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
