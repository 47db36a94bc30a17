#!/usr/bin/env python3
"""An independent reference for strategy/research/cpcv.go (plain Python).

Writes testdata/cpcv/returns.csv (a fixture: per-bar returns of a few
combinations whose returns overlap, each the sum of three bars' noise, as
labels with a three-bar holding period do) and testdata/cpcv/expected.json
(the CPCV figures computed here). Run from strategy/research:

    python3 testdata/cpcv_ref.py

The rules are those cpcv.go states, implemented here another way: the
training bars by each bar's distance to the nearest test bar, the paths by
counting, the ranks by sorting.
"""
import itertools
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
T, M = 97, 5
N, K, PURGE, EMBARGO, PPY = 6, 2, 3, 0.02, 365.0


def fixture():
    state = 12345
    def rnd():
        nonlocal state
        state = (1103515245 * state + 12345) % (1 << 31)
        return state / float(1 << 31) - 0.5
    noise = [[rnd() * 0.02 for _ in range(T + 2)] for _ in range(M)]
    rets = []
    for m in range(M):
        if m == M - 1:
            rets.append([0.0] * T)  # a combination that never trades
            continue
        drift = 0.0005 * (m - 1)
        rets.append([drift + noise[m][i] + noise[m][i + 1] + noise[m][i + 2] for i in range(T)])
    return rets


def sharpe(xs):
    n = len(xs)
    if n < 2:
        return None
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    if var <= 0:
        return None
    return mean / math.sqrt(var)


def main():
    rets = fixture()
    with open(os.path.join(HERE, "cpcv", "returns.csv"), "w") as f:
        for r in rets:
            f.write(",".join(repr(x) for x in r) + "\n")
    group = [None] * T
    bounds = [g * T // N for g in range(N + 1)]
    for g in range(N):
        for i in range(bounds[g], bounds[g + 1]):
            group[i] = g
    emb = math.ceil(EMBARGO * T)
    splits, logits = [], []
    for test in itertools.combinations(range(N), K):
        tb = [i for i in range(T) if group[i] in test]
        train = []
        for i in range(T):
            if group[i] in test:
                continue
            after = [j for j in tb if j > i]
            before = [j for j in tb if j < i]
            if after and min(after) - i <= PURGE:
                continue
            if before and i - max(before) <= PURGE + emb:
                continue
            train.append(i)
        srs = [sharpe([rets[m][i] for i in train]) for m in range(M)]
        cands = [(s, m) for m, s in enumerate(srs) if s is not None]
        if not cands:
            splits.append({"test_groups": list(test), "train_bars": len(train), "picked": -1, "logit": None})
            continue
        best = max(s for s, _ in cands)
        pick = min(m for s, m in cands if s == best)
        oos = [sharpe([rets[m][i] for i in tb]) for m in range(M)]
        key = [(-math.inf if s is None else s) for s in oos]
        order = sorted(key)
        v = key[pick]
        first = order.index(v) + 1
        last = len(order) - order[::-1].index(v)
        rank = (first + last) / 2.0
        w = rank / (M + 1)
        lam = math.log(w / (1 - w))
        logits.append(lam)
        splits.append({"test_groups": list(test), "train_bars": len(train), "picked": pick, "logit": lam})
    phi = math.comb(N - 1, K - 1)
    seen = [0] * N
    pieces = [[None] * N for _ in range(phi)]
    for s in splits:
        for g in s["test_groups"]:
            pieces[seen[g]][g] = s["picked"]
            seen[g] += 1
    paths = []
    for p in range(phi):
        if any(m is None or m < 0 for m in pieces[p]):
            paths.append(None)
            continue
        r = [rets[pieces[p][group[i]]][i] for i in range(T)]
        s = sharpe(r)
        paths.append(None if s is None else s * math.sqrt(PPY))
    d = sorted(x for x in paths if x is not None)

    def q(p):
        h = (len(d) - 1) * p
        lo = math.floor(h)
        hi = min(lo + 1, len(d) - 1)
        return d[lo] + (h - lo) * (d[hi] - d[lo])
    out = {
        "groups": N, "test_groups": K, "purge_bars": PURGE, "embargo_bars": emb, "combinations": M, "bars": T,
        "splits": splits, "path_sharpe": paths,
        "mean": sum(d) / len(d), "p5": q(0.05), "p25": q(0.25), "median": q(0.5), "p75": q(0.75), "p95": q(0.95),
        "pbo": sum(1 for x in logits if x <= 0) / len(logits),
    }
    with open(os.path.join(HERE, "cpcv", "expected.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
