"""Reference off-policy estimates from Open Bandit Pipeline (obp 0.5.7) for pkg/ope's tests.

Reads the rows that rated eval replay evaluated (per event: the logged action, reward and
propensity, the target policy's action distribution and the reward model's estimates) and writes
obp's IPS, SNIPS, DR, DM and replay (RM) estimates, and 95% intervals computed with numpy/scipy on
obp's own per-round estimates (obp's estimate_interval bootstraps the same per-round values with
numpy's random generator, which Go cannot reproduce; its bootstrap is also reported).

obp declares Python < 3.11 and hard-depends on torch and pandas, which its estimators never call:
the estimators module is imported alone, with stand-ins for those two (scripts/setup.d/06-obp.sh).
"""
import importlib.util
import json
import sys
import types

import numpy as np
from scipy import stats


def import_obp_estimators():
    import sklearn.utils  # noqa: F401  (before the stand-ins: it looks for a real pandas)

    for name in ("torch", "pandas"):
        stub = types.ModuleType(name)
        stub.tensor = stub.Tensor = stub.DataFrame = object
        sys.modules.setdefault(name, stub)
    root = importlib.util.find_spec("obp").submodule_search_locations[0]
    for pkg, path in (("obp", root), ("obp.ope", root + "/ope")):
        mod = types.ModuleType(pkg)
        mod.__path__ = [path]
        sys.modules[pkg] = mod
    import obp.ope.estimators as est

    return est


def t_interval(x):
    n = len(x)
    mean = float(np.mean(x))
    if n < 2:
        return [mean, mean, mean]
    half = float(stats.t.ppf(0.975, n - 1) * np.std(x, ddof=1) / np.sqrt(n))
    return [mean, mean - half, mean + half]


def main(inp, out):
    est = import_obp_estimators()
    with open(inp) as f:
        doc = json.load(f)
    res = {}
    for name, rows in doc["policies"].items():
        action = np.array(rows["action"], dtype=int)
        reward = np.array(rows["reward"], dtype=float)
        pscore = np.array(rows["pscore"], dtype=float)
        dist = np.array(rows["action_dist"], dtype=float)[:, :, None]
        qhat = np.array(rows["qhat"], dtype=float)[:, :, None]
        position = np.zeros_like(action)
        kw = dict(reward=reward, action=action, pscore=pscore, action_dist=dist, position=position)
        r = {}
        for key, e, extra in (
            ("ips", est.InverseProbabilityWeighting(), {}),
            ("snips", est.SelfNormalizedInverseProbabilityWeighting(), {}),
            ("dr", est.DoublyRobust(), {"estimated_rewards_by_reg_model": qhat}),
        ):
            r[key] = float(e.estimate_policy_value(**kw, **extra))
            rounds = e._estimate_round_rewards(**kw, **extra)
            r[key + "_rounds_interval"] = t_interval(rounds)
            boot = e.estimate_interval(**kw, **extra, n_bootstrap_samples=2000, random_state=12345)
            r[key + "_bootstrap"] = [boot["mean"], boot["95.0% CI (lower)"], boot["95.0% CI (upper)"]]
        # SNIPS's delta-method interval (rated's), in numpy: the t interval of w·(r − V)/mean(w).
        w = dist[np.arange(len(action)), action, 0] / pscore
        v = r["snips"]
        lin = w * (reward - v) / w.mean()
        half = t_interval(lin)[2] - float(np.mean(lin))
        r["snips_delta_interval"] = [v, v - half, v + half]
        dm = est.DirectMethod()
        r["dm"] = float(dm.estimate_policy_value(position=position, action_dist=dist, estimated_rewards_by_reg_model=qhat))
        # Replay (RM): the rejection sampling redone here from the replay pass's draws
        # (kept when u < p_min / p), and obp's ReplayMethod given the kept rows with the replay
        # pass's choices one-hot, so obp itself picks the rows where the target agrees.
        choice = np.array(rows["replay_choice"], dtype=int)
        draw = np.array(rows["replay_draw"], dtype=float)
        kept = np.flatnonzero(draw < rows["min_propensity"] / pscore)
        r["replay_accepted"] = [int(i) for i in kept if choice[i] == action[i]]
        acc = np.array(r["replay_accepted"], dtype=int)
        if len(acc):
            rm = est.ReplayMethod()
            onehot = np.zeros((len(kept), dist.shape[1], 1))
            onehot[np.arange(len(kept)), choice[kept], 0] = 1
            r["replay"] = float(rm.estimate_policy_value(reward=reward[kept], action=action[kept], action_dist=onehot, position=position[kept]))
            r["replay_interval"] = t_interval(reward[acc])
        res[name] = r
    with open(out, "w") as f:
        json.dump(res, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
