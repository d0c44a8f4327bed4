#!/usr/bin/env python3
"""Stopping rules for Retry's fallback, replayed exactly from its decision log.

Retry (k) walks the static ranking and never learns, and whether a tool executes at step t is a
fixed fact of the run's schedule, so any rule that only decides *when to stop* walking Retry's
order can be replayed from Retry's own decision log without a simulator: the steps and the
outcomes up to the stop are the logged ones. This measures how far such rules get towards Retry
(k=3)'s SR with fewer attempts per step (issue 11's fallback goal, docs/RESULTS.md "In flaky: a
frontier, and what bounds it").

    rated eval dynamic --config configs/extended.yaml --config configs/fallback-log.yaml \\
        --out runs/fallback-log --decision-log runs/fallback-log-decisions
    python3 scripts/fallback-stopping.py runs/fallback-log-decisions

Rule families (a > 0 is the attempt about to be made; c is the next candidate in Retry's order):
  k            Retry (k) for k = 1, 2, 3;
  cal < tau    stop when c's calibrated P(relevant) is below tau (what any policy knows);
  cal < (t2, t3) the same with one threshold per attempt: every rule that stops by a monotone
               per-attempt recalibration of the estimate (the grid's best point is chosen on
               the replayed split itself: optimistic for the family);
  cal*p < (t2, t3) stop when calibrated P(relevant) times c's success probability is below
               a per-attempt threshold, p being 0.3 for a tool that failed anywhere in the window
               (an oracle's knowledge of which tools are flaky: optimistic for a policy).
The rule that knows relevance is rated's own (oracle_fallback with knows_relevance, keep_order).
Only the standard library is used.
"""
import argparse
import collections

import retrylog


def load(directory, start, end):
    """Returns {(run, t): [(attempt, candidate, executed, served)]}, the candidate Retry tried."""
    steps, decisions = {}, {}
    for run, _, _, r in retrylog.records(directory):
        if r["kind"] == "decision":
            decisions[r["id"]] = r
            continue
        d = decisions[r["id"]]
        if start <= d["t"] < end:
            steps.setdefault((run, d["t"]), []).append(
                (d["attempt"], d["candidates"][r["position"]], r["executed"], r["served"]))
    return steps


def replay(steps, stop):
    """SR and attempts per step of Retry's walk cut short before attempt a > 0 of run on
    candidate c where stop(run, a, c) says so."""
    attempts = served = 0
    for (run, _), walk in steps.items():
        for a, cand, executed, ok in walk:
            if a > 0 and stop(run, a, cand):
                break
            attempts += 1
            if executed:
                served += ok
                break
    return served / len(steps), attempts / len(steps)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("log", help="decision-log directory of a Retry (k=3) run")
    ap.add_argument("--from", dest="start", type=int, default=2000, help="first step of the summary window (0-based)")
    ap.add_argument("--to", dest="end", type=int, default=5000, help="end of the summary window (exclusive)")
    ap.add_argument("--budget", type=float, default=1.15, help="attempts per step of the goal")
    args = ap.parse_args()
    steps = load(args.log, args.start, args.end)
    runs = {k[0] for k in steps}
    print(f"{len(steps)} steps of {len(runs)} runs, window [{args.start}, {args.end})")

    reached = collections.Counter()
    yields = collections.Counter()
    calib = collections.defaultdict(list)
    for walk in steps.values():
        for a, cand, executed, ok in walk:
            reached[a] += 1
            yields[a] += ok
            if executed:
                calib[a].append((cand["calibrated"], ok))
    print("\nattempt | steps reaching it | P(served) | executed: mean calibrated P(relevant) | executed: share relevant")
    for a in sorted(reached):
        ex = calib[a]
        mc = sum(c for c, _ in ex) / len(ex) if ex else float("nan")
        mr = sum(o for _, o in ex) / len(ex) if ex else float("nan")
        print(f"{a + 1} | {reached[a]} | {yields[a] / reached[a]:.3f} | {mc:.3f} | {mr:.3f}")

    failed = collections.defaultdict(set)
    for (run, _), walk in steps.items():
        for _, cand, executed, _ in walk:
            if not executed:
                failed[run].add(cand["tool"])

    rows = []
    for k in (1, 2, 3):
        rows.append((f"Retry (k={k})", *replay(steps, lambda run, a, c, k=k: a >= k)))
    for tau in (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4):
        rows.append((f"cal < {tau}", *replay(steps, lambda run, a, c, tau=tau: c["calibrated"] < tau)))
    print("\nrule | SR | attempts/step")
    for name, sr, att in rows:
        print(f"{name} | {100 * sr:.2f}% | {att:.3f}")

    def flaky_p(run, c):
        return 0.3 if c["tool"] in failed[run] else 1.0

    grid = [i / 40 for i in range(17)]  # 0 to 0.4, for the attempts 2 and 3
    families = {"cal < (t2, t3)": [], "cal*p < (t2, t3)": []}
    for t2 in grid:
        for t3 in grid:
            t = (0, t2, t3)
            families["cal < (t2, t3)"].append(((t2, t3), *replay(
                steps, lambda run, a, c, t=t: c["calibrated"] < t[min(a, 2)])))
            families["cal*p < (t2, t3)"].append(((t2, t3), *replay(
                steps, lambda run, a, c, t=t: c["calibrated"] * flaky_p(run, c) < t[min(a, 2)])))
    goal = rows[2][1]
    budgets = (1.10, 1.125, 1.15, 1.175)
    print("\nfamily | " + " | ".join(f"best SR at <= {a} (t2, t3; attempts)" for a in budgets))
    for fam, pts in families.items():
        cells = []
        for a in budgets:
            best = max((q for q in pts if q[2] <= a), key=lambda q: q[1], default=None)
            cells.append(f"{100 * best[1]:.2f}% ({best[0][0]}, {best[0][1]}; {best[2]:.3f})" if best else "none")
        print(f"{fam} | " + " | ".join(cells))
    best = max((q for pts in families.values() for q in pts if q[2] <= args.budget), key=lambda q: q[1], default=None)
    print(f"\nRetry (k=3): {100 * goal:.2f}% at {rows[2][2]:.3f} attempts; best of both families at <= {args.budget}: "
          + (f"{100 * best[1]:.2f}% at {best[2]:.3f} ({100 * (best[1] - goal):+.2f} points)" if best else "none"))


if __name__ == "__main__":
    main()
