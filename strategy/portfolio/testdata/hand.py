# The hand computation of the tables (equal_weight.csv, pairs.csv), in
# exact decimal arithmetic, step by step as docs/strategies.md states
# the rules. Run: python3 hand.py (it rewrites the two tables).
from decimal import Decimal as D, getcontext
getcontext().prec = 50
import csv
rows = list(csv.DictReader(open("assets.csv")))
names = ["A-USD@1d", "B-USD@1d"]
times = sorted({r["time"] for r in rows})
bar = {(r["asset"], r["time"]): r for r in rows}
def px(a, t, k):
    r = bar.get((a, times[t]))
    return None if r is None else D(r[k])
N = len(times)
def sim(weights, fee_bps, slip_bps, capital=D(10000)):
    fee, slip = D(fee_bps) / 10000, D(slip_bps) / 10000
    sizing = (1 + slip) * (1 + fee)
    cash, q, mark = capital, {a: D(0) for a in names}, {a: None for a in names}
    pending, out, fees = {}, [], D(0)
    for t in range(N):
        for a in names:
            o = px(a, t, "open")
            if o is None:
                continue  # no bar: no fill, the order waits
            if a in pending:
                dq = pending.pop(a) - q[a]
                if dq != 0:
                    side = 1 if dq > 0 else -1
                    p = o * (1 + side * slip)
                    f = abs(dq) * p * fee
                    cash -= dq * p + f
                    fees += f
                    q[a] += dq
            mark[a] = px(a, t, "close")
        eq = cash + sum(q[a] * mark[a] for a in names if q[a] != 0)
        w = {a: weights[a][t] for a in names}
        s = sum(abs(x) for x in w.values() if x is not None)
        if s > 1:
            w = {a: (None if x is None else x / s) for a, x in w.items()}
        for a in names:  # rebalance every bar
            c = px(a, t, "close")
            if c is None or w[a] is None or t == N - 1:
                continue
            pending[a] = w[a] * eq / (c * sizing)
        out.append((times[t], cash, q["A-USD@1d"], q["B-USD@1d"], eq))
    return out, fees
def cents(x):
    return str(x.quantize(D("0.01")))
def q8(x):
    return format(x.quantize(D("0.00000001")), "f")
def write(name, out):
    with open(name, "w") as f:
        f.write("time,cash,qty_a,qty_b,equity\n")
        for t, cash, qa, qb, eq in out:
            f.write(f"{t},{cents(cash)},{q8(qa)},{q8(qb)},{cents(eq)}\n")
# Equal weight: 1/2 each on every bar, fee 10 bps, slippage 5 bps.
ew = {a: [D("0.5")] * N for a in names}
out, fees = sim(ew, 10, 5)
write("equal_weight.csv", out)
# Pairs: spread = close A - close B on the bars both have; z over the
# last 3 such bars (population standard deviation); A long and B short
# (1/2 each) when z < -1, the reverse when z > 1, flat otherwise; None
# (no decision) where the spread has no value.
spread = []
for t in range(N):
    a, b = px("A-USD@1d", t, "close"), px("B-USD@1d", t, "close")
    spread.append(None if a is None or b is None else a - b)
kept = [t for t in range(N) if spread[t] is not None]
z = [None] * N
for k, t in enumerate(kept):
    if k < 2:
        continue
    win = [spread[u] for u in kept[k - 2:k + 1]]
    m = sum(win) / 3
    sd = (sum((x - m) ** 2 for x in win) / 3).sqrt()
    z[t] = None if sd == 0 else (spread[t] - m) / sd
wa, wb = [], []
for t in range(N):
    if z[t] is None:
        wa.append(None); wb.append(None); continue
    x = D("0.5") if z[t] < -1 else (D("-0.5") if z[t] > 1 else D(0))
    wa.append(x); wb.append(-x)
out, fees = sim({"A-USD@1d": wa, "B-USD@1d": wb}, 10, 5)
write("pairs.csv", out)
print("z", [None if x is None else float(x) for x in z])
