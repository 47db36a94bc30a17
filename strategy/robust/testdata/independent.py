"""An independent implementation of PSR and MinBTL, from the papers' formulas,
on Python's standard library alone (statistics.NormalDist). Reads lines of
"psr SR SR* T SKEW KURT" or "minbtl N SHARPE" on stdin and prints one value
a line, so robust_test.go can compare the Go figures with it."""
import math
import sys
from statistics import NormalDist

N = NormalDist()
GAMMA = 0.5772156649015329

for line in sys.stdin:
    f = line.split()
    if not f:
        continue
    if f[0] == "psr":
        sr, star, t, skew, kurt = map(float, f[1:])
        print(repr(N.cdf((sr - star) * math.sqrt(t - 1) / math.sqrt(1 - skew * sr + (kurt - 1) / 4 * sr * sr))))
    elif f[0] == "minbtl":
        n, sharpe = float(f[1]), float(f[2])
        z = (1 - GAMMA) * N.inv_cdf(1 - 1 / n) + GAMMA * N.inv_cdf(1 - 1 / (n * math.e))
        print(repr((z / sharpe) ** 2))
