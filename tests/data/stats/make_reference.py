#!/usr/bin/env python3
"""Reference values for src/stats (ab_stats_test.cc compares against reference.json).

Run: python3 tests/data/stats/make_reference.py > tests/data/stats/reference.json
Needs numpy and scipy (Debian: apt-get install python3-scipy); NOT a project dependency,
only for regenerating this file. The inputs are fixed below and copied into the JSON.
"""
import json
import math
import random
import sys

import numpy as np
import scipy
from scipy import stats

# Fixed input vectors (log ratios d). Chosen to cover: clear effect, null, mixed signs,
# zeros (dropped), ties in |d| (normal approximation), n above 50 (exact DP beyond scipy's
# 'auto' switch), a tiny n.
rng = random.Random(20261129)
VECTORS = {
    "clear_gain": [0.031, 0.027, 0.035, 0.029, 0.024, 0.033, 0.030, 0.026, 0.028, 0.032],
    "null_mixed": [0.004, -0.006, 0.011, -0.002, 0.007, -0.009, 0.001, -0.003, 0.005, -0.008],
    "small_n": [0.012, -0.004, 0.009],
    "mostly_loss": [-0.021, -0.015, 0.004, -0.030, -0.012, -0.018, 0.002, -0.025],
    "with_zeros": [0.0, 0.013, -0.002, 0.0, 0.009, 0.017, -0.005, 0.011, 0.0, 0.006],
    "with_ties": [0.01, -0.01, 0.02, 0.01, -0.02, 0.03, 0.01, 0.02, -0.005, 0.04],
    "n60": [round(rng.gauss(0.002, 0.01), 9) for _ in range(60)],
    "n150": [round(rng.gauss(-0.001, 0.01), 9) for _ in range(150)],
}
CONFIDENCES = [0.95, 0.90, 0.99]
PERCENTILES = [50.0, 90.0, 95.0, 99.0]
# Sign-test cases (k favouring B, n non-tied pairs), including the centre and extremes.
BINOM_CASES = [(0, 1), (1, 1), (5, 10), (8, 10), (10, 10), (3, 12), (17, 20), (40, 100), (0, 6)]


def paired_t(d, conf):
    a = np.asarray(d, dtype=float)
    n = a.size
    mean = float(a.mean())
    sd = float(a.std(ddof=1))
    tq = float(stats.t.ppf(0.5 + conf / 2, n - 1))
    hw = tq * sd / math.sqrt(n)
    p = float(stats.ttest_1samp(a, 0.0).pvalue)
    return {"confidence": conf, "mean": mean, "sd": sd, "t_quantile": tq,
            "lo": mean - hw, "hi": mean + hw, "p": p}


def wilcoxon(d):
    a = np.asarray(d, dtype=float)
    nz = a[a != 0]  # zeros dropped first (zero_method='wilcox'), so 'exact' stays exact
    mag = np.abs(nz)
    ties = len(np.unique(mag)) != len(mag)
    method = "approx" if ties else "exact"
    res = stats.wilcoxon(nz, zero_method="wilcox", correction=False, method=method)
    r = stats.rankdata(mag)
    return {"n_used": int(nz.size), "n_zeros": int(a.size - nz.size), "has_ties": bool(ties),
            "method": method, "w_plus": float(r[nz > 0].sum()),
            "w_minus": float(r[nz < 0].sum()), "statistic": float(res.statistic),
            "p": float(res.pvalue)}


def signs(d):
    a = np.asarray(d, dtype=float)
    k, m = int((a > 0).sum()), int((a < 0).sum())
    p = float(stats.binomtest(k, k + m).pvalue) if k + m > 0 else 1.0
    return {"favour_b": k, "favour_a": m, "ties": int((a == 0).sum()), "p": p}


out = {
    "generator": "tests/data/stats/make_reference.py",
    "python": sys.version.split()[0],
    "numpy": np.__version__,
    "scipy": scipy.__version__,
    "vectors": {},
    "binomtest": [{"k": k, "n": n, "p": float(stats.binomtest(k, n).pvalue)} for k, n in BINOM_CASES],
}
for name, d in VECTORS.items():
    mags = np.abs(np.asarray(d, dtype=float))
    out["vectors"][name] = {
        "d": d,
        "paired_t": [paired_t(d, c) for c in CONFIDENCES],
        "wilcoxon": wilcoxon(d),
        "signs": signs(d),
        "abs_percentiles": [{"q": q, "value": float(np.percentile(mags, q))} for q in PERCENTILES],
    }
json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
