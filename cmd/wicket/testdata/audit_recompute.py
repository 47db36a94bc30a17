"""Recompute a run's deflated Sharpe ratios and its probability of backtest
overfitting from `wicket research export RUN` alone, with nothing but the
Python standard library, and print them as JSON.

usage: python3 audit_recompute.py EXPORT.json
"""
import json
import math
import sys
from itertools import combinations
from statistics import NormalDist

PHI, GAMMA = NormalDist(), 0.5772156649  # the standard normal; Euler-Mascheroni


def variance(x):
    m = sum(x) / len(x)
    return sum((v - m) ** 2 for v in x) / (len(x) - 1) if len(x) > 1 else 0.0


def dsr(win, n, srs):
    """Bailey and Lopez de Prado (2014): P(true SR > 0) for the best of n trials."""
    sr, skew, kurt, t = win["sr"], win["skew"], win["kurt"], win["t"]
    sr0 = 0.0 if n == 1 else math.sqrt(variance(srs)) * (
        (1 - GAMMA) * PHI.inv_cdf(1 - 1 / n) + GAMMA * PHI.inv_cdf(1 - 1 / (n * math.e)))
    return PHI.cdf((sr - sr0) * math.sqrt(t - 1) / math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr * sr))


def subset_sums(blocks, first, k):
    """Sums (n, s, q) of every subset of blocks first..first+k-1, bit i for block first+i."""
    t = [(0, 0.0, 0.0)] * (1 << k)
    for a in range(1, 1 << k):
        low = a & -a
        b = blocks[first + low.bit_length() - 1]
        n, s, q = t[a ^ low]
        t[a] = (n + b["n"], s + b["s"], q + b["q"])
    return t


def score(lo, hi):
    """Orders Sharpe ratios over one count of returns: s|s| / (n q - s^2); -inf when undefined."""
    n, s, q = lo[0] + hi[0], lo[1] + hi[1], lo[2] + hi[2]
    d = n * q - s * s
    return s * abs(s) / d if n >= 2 and d > 1e-10 * n * q else -math.inf


def pbo(trials):
    """CSCV (Bailey, Borwein, Lopez de Prado and Zhu, 2017) over the trials' PBO blocks."""
    rows = [t["blocks"] for t in trials if not t.get("error") and t.get("blocks")]
    S = len(rows[0])
    h = S // 2
    tables = [(subset_sums(b, 0, h), subset_sums(b, h, S - h)) for b in rows]
    low = (1 << h) - 1
    below = splits = 0
    for chosen in combinations(range(S), h):
        m = sum(1 << i for i in chosen)
        c = ((1 << S) - 1) ^ m
        ins = [score(lo[m & low], hi[m >> h]) for lo, hi in tables]
        outs = [score(lo[c & low], hi[c >> h]) for lo, hi in tables]
        best = max(range(len(ins)), key=lambda i: (ins[i], -i))  # the first best wins a tie
        if ins[best] == -math.inf:
            continue  # no defined in-sample winner: not a split
        w = outs[best]
        less = sum(1 for i, u in enumerate(outs) if i != best and u < w)
        ties = sum(1 for i, u in enumerate(outs) if i != best and u == w)
        omega = (1 + less + ties / 2) / (len(rows) + 1)
        splits += 1
        below += math.log(omega / (1 - omega)) <= 0
    return below / splits


def main(path):
    x = json.load(open(path))
    if x["kind"] == "walk_forward":
        print(json.dumps({"windows": walk_forward(x["trials"])}))
        return
    trials = x["trials"]
    win = next(t["stats"] for t in trials if t.get("winner"))
    own = [t["sharpe_per_period"] for t in trials if t["sharpe_per_period"] is not None]
    led = x["ledger"]["trials"]
    mine = [t for t in led if t["strategy"] == x["strategy"]]
    defined = lambda ts: [t["sharpe_per_period"] for t in ts if t["sharpe_per_period"] is not None]
    print(json.dumps({
        "dsr": dsr(win, len(trials), own),
        "ledger_dsr": dsr(win, len(led), defined(led)),
        "ledger_dsr_by_strategy": dsr(win, len(mine), defined(mine)),
        "series_trials": len(led),
        "strategy_trials": len(mine),
        "pbo": pbo(trials),
    }))


def walk_forward(trials):
    """Each window's in-sample sweep: its winner's DSR over its trials, and their PBO."""
    out = []
    for k in sorted({t["window"] for t in trials}):
        ts = [t for t in trials if t["window"] == k]
        win = next((t["stats"] for t in ts if t.get("winner")), None)
        if win is None:
            continue  # a window that did not finish
        own = [t["sharpe_per_period"] for t in ts if t["sharpe_per_period"] is not None]
        w = {"window": k, "trials": len(ts), "dsr": dsr(win, len(ts), own)}
        if any(t.get("blocks") for t in ts):
            w["pbo"] = pbo(ts)
        out.append(w)
    return out


if __name__ == "__main__":
    main(sys.argv[1])
