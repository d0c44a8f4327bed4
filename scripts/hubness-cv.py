#!/usr/bin/env python3
"""Cross-validated log-loss of the calibration with and without its hubness feature.

The calibration (pkg/bandit, Calibrator) maps a candidate's retrieval features to P(relevant);
its hubness feature is log((c + a·s̄)/(n + a)), c the number of the n bank queries that have the
tool among their top `depth` candidates, s̄ = depth / catalog size and a the strength. This
script chooses depth and strength on a dev split by two-fold cross-validation over its queries
(folds by query id, as fallback-plans.py): the calibration is fitted on one fold's rankings, that
fold being the bank (each query's own counts left out, as FitCalibrator does), and scored on the
other fold's, whose queries the bank never saw, as a test split's are not. The rankings come from
Retry's decision log of `rated eval dynamic` on the dev split (the first attempt of each
query's first step); the relevance labels from the split's qrels.

    rated eval dynamic --config configs/extended.yaml --config configs/fallback-log.yaml \\
        --out runs/fallback-log --decision-log runs/fallback-log-decisions
    python3 scripts/hubness-cv.py runs/fallback-log-decisions pkg/defaultbench/data/qrels/dev.tsv \\
        --corpus pkg/defaultbench/data/corpus.jsonl

Printed: the log-loss per example of the base fit, then per depth and strength the hubness
fit's, its difference and the fitted weight of each fold. Only the standard library is used.
"""
import argparse
import collections
import hashlib
import math
import sys

import retrylog


def rankings(directory):
    """Returns {query id: [(tool, semantic), ...]} from the first decision of each query."""
    out = {}
    for _, path, lineno, r in retrylog.records(directory):
        if r["kind"] != "decision" or r["attempt"] != 0 or r["query"]["id"] in out:
            continue
        try:
            out[r["query"]["id"]] = [(c["tool"], float(c["semantic"])) for c in r["candidates"]]
        except (KeyError, TypeError, ValueError) as e:
            sys.exit(f"{path}:{lineno}: candidate without a tool and a semantic score ({e})")
    return out


def corpus_size(path):
    n = 0
    with retrylog.open_text(path) as f:
        for line in f:
            n += bool(line.strip())
    return n


def fold(query):
    return int(hashlib.md5(query.encode()).hexdigest(), 16) % 2


def base_features(ranking):
    top = ranking[0][1]
    return [[1.0, s, s - top, math.log1p(i)] for i, (_, s) in enumerate(ranking)]


def solve(a, b):
    """Solves a·x = b (a small symmetric positive definite matrix) by Gaussian elimination."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def sigmoid(z):
    if z >= 0:
        return 1 / (1 + math.exp(-z))
    e = math.exp(z)
    return e / (1 + e)


def fit(xs, ys, ridge=1e-6):
    """Logistic regression by Newton's method, ridge on every weight but the intercept (x[0] = 1),
    from the base rate: FitCalibrator's objective."""
    p = len(xs[0])
    base = sum(ys) / len(ys)
    w = [math.log(base / (1 - base))] + [0.0] * (p - 1)
    for _ in range(100):
        g = [0.0] * p
        h = [[0.0] * p for _ in range(p)]
        for x, y in zip(xs, ys):
            mu = sigmoid(sum(a * b for a, b in zip(w, x)))
            for i in range(p):
                g[i] += (y - mu) * x[i]
                for j in range(p):
                    h[i][j] += mu * (1 - mu) * x[i] * x[j]
        for i in range(1, p):
            g[i] -= ridge * w[i]
            h[i][i] += ridge
        step = solve(h, g)
        w = [a + b for a, b in zip(w, step)]
        if max(abs(s) for s in step) < 1e-10:
            break
    return w


def log_loss(w, xs, ys):
    total = 0.0
    for x, y in zip(xs, ys):
        z = sum(a * b for a, b in zip(w, x))
        # −log σ(z) for y = 1, −log(1 − σ(z)) for y = 0, written to stay finite.
        total += math.log1p(math.exp(-abs(z))) + max(-z if y else z, 0)
    return total


def hub_feature(c, n, strength, share):
    return math.log((c + strength * share) / (n + strength))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", help="directory of Retry's decision log of rated eval dynamic on the dev split")
    ap.add_argument("qrels", help="the dev split's qrels (TSV, optionally .gz)")
    ap.add_argument("--corpus", required=True, help="the benchmark's corpus.jsonl(.gz), for the catalog size")
    ap.add_argument("--depths", default="1,3,5,10", help="depths to try (comma-separated)")
    ap.add_argument("--strengths", default="1,10,100", help="strengths to try (comma-separated)")
    args = ap.parse_args()
    try:
        depths = [int(d) for d in args.depths.split(",")]
        strengths = [float(s) for s in args.strengths.split(",")]
    except ValueError as e:
        sys.exit(f"--depths/--strengths: {e}")
    if any(d < 1 for d in depths) or any(not s > 0 for s in strengths):
        sys.exit("--depths must be >= 1 and --strengths > 0")
    lists = rankings(args.logs)
    rel = retrylog.qrels(args.qrels)
    size = corpus_size(args.corpus)
    if size == 0:
        sys.exit(f"{args.corpus}: no documents")
    labels = {q: [1.0 if t in rel[q] else 0.0 for t, _ in r] for q, r in lists.items()}
    folds = [sorted(q for q in lists if fold(q) == f) for f in (0, 1)]
    if not folds[0] or not folds[1]:
        sys.exit("both folds need queries")
    n_examples = sum(len(r) for r in lists.values())

    def examples(queries, feature=None):
        xs, ys = [], []
        for q in queries:
            for i, x in enumerate(base_features(lists[q])):
                xs.append(x + ([feature(q, i)] if feature else []))
                ys.append(labels[q][i])
        return xs, ys

    base = 0.0
    for f in (0, 1):
        bank, held = folds[1 - f], folds[f]
        xs, ys = examples(bank)
        base += log_loss(fit(xs, ys), *examples(held))
    base /= n_examples
    print(f"{len(lists)} queries ({len(folds[0])} and {len(folds[1])} per fold), {n_examples} examples, catalog of {size}")
    print(f"base (S_sem, gap to top, log(1+rank)) | log-loss {base:.5f}")
    for depth in depths:
        share = min(1.0, depth / size)
        for strength in strengths:
            total, weights = 0.0, []
            for f in (0, 1):
                bank, held = folds[1 - f], folds[f]
                count = collections.Counter(t for q in bank for t, _ in lists[q][:depth])
                n = len(bank)
                own = lambda q, i: 1 if i < depth else 0  # noqa: E731 (the bank query's own count)
                xs, ys = examples(bank, lambda q, i: hub_feature(count[lists[q][i][0]] - own(q, i), n - 1, strength, share))
                w = fit(xs, ys)
                weights.append(w[-1])
                total += log_loss(w, *examples(held, lambda q, i: hub_feature(count[lists[q][i][0]], n, strength, share)))
            total /= n_examples
            print(f"depth {depth} strength {strength:g} | log-loss {total:.5f} | {total - base:+.5f} | weights {weights[0]:.3f} {weights[1]:.3f}")


if __name__ == "__main__":
    main()
