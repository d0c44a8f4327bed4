#!/usr/bin/env python3
"""Fallback plans that reorder as well as stop, in expectation over the flaky coins.

fallback-stopping.py replays rules that only decide where to stop walking Retry's order. This
script measures plans that also choose the order: each step, knowing which tools are flaky (the
success probability p of every candidate: 0.3 for a tool that failed anywhere in the run, 1
otherwise, an oracle's knowledge) and an estimate e of each candidate's relevance, try the
candidates in the order e − λ/p while their worth p·e − λ is positive, at most --cap of them.
That order and set maximise the expected successes less λ per attempt for the estimate
(docs/RESULTS.md, "In flaky: a frontier, and what bounds it"). A plan's success and attempts are
computed exactly over the coins, with the qrels, so any plan can be scored, not only the order
Retry walked:

    success = Σ_j Π_{i<j}(1 − p_i)·p_j·rel_j        attempts = Σ_j Π_{i<j}(1 − p_i)

    rated eval dynamic --config configs/extended.yaml --config configs/fallback-log.yaml \\
        --out runs/fallback-log --decision-log runs/fallback-log-decisions
    python3 scripts/fallback-plans.py runs/fallback-log-decisions pkg/defaultbench/data/qrels/dev.tsv

Estimates e: the calibrated P(relevant) that every policy has; the share of relevant candidates
at the same rank, at the same rank and flakiness, at the same rank, flakiness and calibrated
tenth, or of the same tool, counted on the other half of the queries (two folds by query id, so
no query's own relevance enters its estimate: what a policy could learn from other queries'
relevance); the same by rank, flakiness and calibrated tenth counted on all queries, the planned
one's own included (in-sample, to show what memorising a query's relevance is worth); and the
qrels' 0/1 (knows relevance: a bound, not a policy). The best SR within a budget mixes the two
frontier points around it (a policy that draws one of two λ per step). Only the standard library
is used.
"""
import argparse
import collections
import hashlib
import sys

import retrylog

LAMBDAS = [0, 0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4,
           0.5, 0.7, 0.9, 1.0]


def load(directory, start, end):
    """Returns [(run, t, query, [candidate...], flaky tools of the run)] for the window's steps."""
    steps, first, failed = [], {}, collections.defaultdict(set)
    for run, _, _, r in retrylog.records(directory):
        if r["kind"] == "decision":
            if r["attempt"] == 0 and start <= r["t"] < end:
                first[run, r["t"]] = (r["query"]["id"], r["candidates"])
        elif not r["executed"]:
            failed[run].add(r["tool"])
    for (run, t), (q, cands) in sorted(first.items()):
        steps.append((run, t, q, cands, failed[run]))
    return steps


def fold(query):
    return int(hashlib.md5(query.encode()).hexdigest(), 16) % 2


def score(steps, rel, p_flaky, plan):
    """Expected SR and attempts per step of plan(step) -> candidate positions in order."""
    success = attempts = 0.0
    for step in steps:
        _, _, q, cands, flaky = step
        alive = 1.0
        for j in plan(step):
            tool = cands[j]["tool"]
            p = p_flaky if tool in flaky else 1.0
            attempts += alive
            success += alive * p * (tool in rel[q])
            alive *= 1 - p
    return success / len(steps), attempts / len(steps)


def cross_fitted(steps, rel, key, same_queries=False):
    """e(step, j): the share of relevant candidates with the same key among the other fold's
    queries (half a prior count at 1/2 behind every key); with same_queries, among all of them,
    the step's own query included (in-sample: it can memorise which tools serve a query)."""
    seen = [collections.Counter(), collections.Counter()]
    hits = [collections.Counter(), collections.Counter()]
    for _, _, q, cands, flaky in steps:
        for j, c in enumerate(cands):
            k = key(j, c, c["tool"] in flaky)
            seen[fold(q)][k] += 1
            hits[fold(q)][k] += c["tool"] in rel[q]

    def estimate(step, j):
        _, _, q, cands, flaky = step
        k = key(j, cands[j], cands[j]["tool"] in flaky)
        if same_queries:
            return (hits[0][k] + hits[1][k] + 0.25) / (seen[0][k] + seen[1][k] + 0.5)
        other = 1 - fold(q)
        return (hits[other][k] + 0.25) / (seen[other][k] + 0.5)
    return estimate


def worth_plan(estimate, lam, p_flaky, cap):
    def plan(step):
        _, _, _, cands, flaky = step
        items = []
        for j, c in enumerate(cands):
            p = p_flaky if c["tool"] in flaky else 1.0
            items.append((estimate(step, j) - lam / p, -j, j))
        items.sort(reverse=True)
        chosen = [j for w, _, j in items if w > 0][:cap]
        return chosen or [items[0][2]]  # at least one attempt
    return plan


def best_within(points, budget):
    """The best SR at <= budget attempts on the frontier of (attempts, SR) points, mixing the two
    points around the budget."""
    pts = sorted(points)
    best = max((s for a, s in pts if a <= budget), default=None)
    for (a1, s1), (a2, s2) in zip(pts, pts[1:]):
        if a1 <= budget < a2:
            mixed = s1 + (s2 - s1) * (budget - a1) / (a2 - a1)
            best = mixed if best is None else max(best, mixed)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log", help="decision-log directory of a Retry (k=3) run (its candidates at every step)")
    ap.add_argument("qrels", help="the split's qrels (query-id, corpus-id, score; TSV)")
    ap.add_argument("--from", dest="start", type=int, default=2000, help="first step of the summary window (0-based)")
    ap.add_argument("--to", dest="end", type=int, default=5000, help="end of the summary window (exclusive)")
    ap.add_argument("--p", type=float, default=0.3, help="success probability of a flaky tool")
    ap.add_argument("--cap", type=int, default=3, help="most attempts per step")
    ap.add_argument("--budget", type=float, default=1.15, help="attempts per step of the goal")
    args = ap.parse_args()
    steps = load(args.log, args.start, args.end)
    if not steps:
        sys.exit(f"{args.log}: no steps in [{args.start}, {args.end})")
    rel = retrylog.qrels(args.qrels)
    print(f"{len(steps)} steps of {len({s[0] for s in steps})} runs, window [{args.start}, {args.end})")

    print("\nplan | SR | attempts/step")
    for k in range(1, args.cap + 1):
        sr, att = score(steps, rel, args.p, lambda step, k=k: list(range(min(k, len(step[3])))))
        print(f"Retry (k={k}) | {100 * sr:.2f}% | {att:.3f}")

    estimates = {
        "calibrated": lambda step, j: step[3][j]["calibrated"],
        "rank (other queries)": cross_fitted(steps, rel, lambda j, c, f: j),
        "rank, flaky (other queries)": cross_fitted(steps, rel, lambda j, c, f: (j, f)),
        "rank, flaky, calibrated tenth (other queries)": cross_fitted(
            steps, rel, lambda j, c, f: (j, f, min(9, int(c["calibrated"] * 10)))),
        "tool (other queries)": cross_fitted(steps, rel, lambda j, c, f: c["tool"]),
        "rank, flaky, calibrated tenth (same queries)": cross_fitted(
            steps, rel, lambda j, c, f: (j, f, min(9, int(c["calibrated"] * 10))), same_queries=True),
        "knows relevance": lambda step, j: float(step[3][j]["tool"] in rel[step[2]]),
    }
    print(f"\nestimate | best SR at <= {args.budget} attempts | frontier (λ: SR, attempts)")
    for name, est in estimates.items():
        points = []
        for lam in LAMBDAS:
            sr, att = score(steps, rel, args.p, worth_plan(est, lam, args.p, args.cap))
            points.append((lam, sr, att))
        best = best_within([(a, s) for _, s, a in points], args.budget)
        cells = "; ".join(f"{lam:g}: {100 * s:.2f}%, {a:.3f}" for lam, s, a in points)
        print(f"{name} | " + (f"{100 * best:.2f}%" if best is not None else "none") + f" | {cells}")


if __name__ == "__main__":
    main()
