#!/usr/bin/env python3
"""An independent reference for the purged, embargoed walk-forward's
selection (strategy/research/purge.go), in plain Python.

Reads the fixture testdata/cpcv/returns.csv (per-bar returns of five
combinations whose returns overlap three bars, as labels held three bars
do; one never trades) and writes testdata/wf/expected.json: for rolling
windows of 40 in-sample and 12 out-of-sample bars, a purge of 3 bars and
an embargo of 4, each window's bars, the in-sample bars it ranks on, the
combination with the best Sharpe ratio there and that ratio, and the
Sharpe ratio of the picks' stitched out-of-sample returns. Run from
strategy/research:

    python3 testdata/wf_ref.py

The rules are those purge.go states, implemented here another way: the
windows from the end of the range backwards, each bar kept or not by
testing it against every earlier out-of-sample window.
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
IS_BARS, OOS_BARS, PURGE, EMBARGO, PPY = 40, 12, 3, 4, 365.0


def sharpe(xs):
    n = len(xs)
    if n < 2:
        return None
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1)
    if var == 0:
        return None
    return mean / math.sqrt(var) * math.sqrt(PPY)


def main():
    with open(os.path.join(HERE, "cpcv", "returns.csv")) as f:
        rets = [[float(x) for x in line.split(",")] for line in f.read().split("\n") if line.strip()]
    t = len(rets[0])
    # Out-of-sample windows tile the end of the range, back to back.
    folds = []
    hi = t
    while hi - OOS_BARS >= IS_BARS:
        folds.append((hi - OOS_BARS, hi))
        hi -= OOS_BARS
    folds.reverse()
    windows, stitched = [], []
    for k, (lo, hi) in enumerate(folds):
        train = []
        for i in range(lo - IS_BARS, lo - PURGE):
            if any(end <= i < end + EMBARGO for (_, end) in folds[:k]):
                continue
            train.append(i)
        best, best_sr = None, None
        for m, r in enumerate(rets):
            sr = sharpe([r[i] for i in train])
            if sr is not None and (best_sr is None or sr > best_sr):
                best, best_sr = m, sr
        stitched += rets[best][lo:hi]
        windows.append({"is_lo": lo - IS_BARS, "is_hi": lo - PURGE, "oos_lo": lo, "oos_hi": hi,
                        "kept": len(train), "pick": best, "sharpe": best_sr})
    out = {"windows": windows, "stitched_sharpe": sharpe(stitched)}
    os.makedirs(os.path.join(HERE, "wf"), exist_ok=True)
    with open(os.path.join(HERE, "wf", "expected.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
