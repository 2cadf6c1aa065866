"""Statistics for reports and judge-vs-expert agreement.

scipy.stats gives correlations, the bootstrap and permutation tests; the
agreement coefficients it lacks (Cohen's kappa, ICC(2,1), Kendall's W) and the
Holm–Bonferroni correction are small enough to write here, and each is checked
against hand-computed values in tests/test_stats.py.

Every resampling function takes a ``seed`` so a report is reproducible: the
same results file always prints the same intervals and p-values.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Literal, Sequence

import numpy as np
from scipy import stats

DEFAULT_RESAMPLES = 2000
"""Enough for stable 95% limits on the sample sizes batch runs produce, cheap
enough that a report over hundreds of cells prints in a second or two."""


class StatsError(ValueError):
    """Input a statistic cannot be computed from (too few values, bad shape)."""


def _as_1d(values: Sequence[float], name: str = "values") -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise StatsError(f"{name} must be one-dimensional")
    if not np.all(np.isfinite(arr)):
        raise StatsError(f"{name} contains NaN or infinite values")
    return arr


# -- means and their confidence intervals ------------------------------------


@dataclass(frozen=True)
class MeanCI:
    mean: float
    low: float
    high: float
    n: int

    def as_dict(self) -> dict[str, float | int]:
        return {"mean": self.mean, "ci_low": self.low, "ci_high": self.high, "n": self.n}


def bootstrap_mean_ci(
    values: Sequence[float],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> MeanCI:
    """Mean with a percentile bootstrap CI (``scipy.stats.bootstrap``).

    With one value, or when every value is the same, there is nothing to
    resample: the interval collapses onto the mean instead of becoming NaN.
    """
    arr = _as_1d(values)
    if arr.size == 0:
        raise StatsError("cannot take the mean of no values")
    mean = float(arr.mean())
    if arr.size == 1 or np.all(arr == arr[0]):
        return MeanCI(mean, mean, mean, int(arr.size))
    res = stats.bootstrap(
        (arr,),
        np.mean,
        confidence_level=confidence,
        n_resamples=n_resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    ci = res.confidence_interval
    return MeanCI(mean, float(ci.low), float(ci.high), int(arr.size))


# -- paired comparisons --------------------------------------------------------


@dataclass(frozen=True)
class PairedComparison:
    mean_diff: float  # mean of (a - b)
    low: float
    high: float
    p_value: float
    n: int
    method: str


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    *,
    method: Literal["bootstrap", "permutation"] = "bootstrap",
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Compare two conditions measured on the same units (case × trial).

    ``bootstrap``: resample the paired differences; the CI is the percentile
    interval of the resampled mean, and the two-sided p-value comes from the
    same resampling of differences re-centred on zero (the null of no mean
    difference), counted with the +1 correction so p is never exactly 0.
    ``permutation``: a sign-flip test of the differences
    (``scipy.stats.permutation_test`` with ``permutation_type='samples'``).
    """
    x, y = _as_1d(a, "a"), _as_1d(b, "b")
    if x.size != y.size:
        raise StatsError(f"paired samples differ in length ({x.size} vs {y.size})")
    if x.size < 2:
        raise StatsError("a paired comparison needs at least 2 pairs")
    d = x - y
    observed = float(d.mean())
    rng = np.random.default_rng(seed)
    if np.all(d == d[0]):
        # No variability: the difference is exactly what it is.
        p = 1.0 if observed == 0 else 1.0 / (n_resamples + 1)
        return PairedComparison(observed, observed, observed, p, int(d.size), method)
    if method == "bootstrap":
        idx = rng.integers(0, d.size, size=(n_resamples, d.size))
        boot = d[idx].mean(axis=1)
        alpha = (1 - confidence) / 2
        low, high = np.quantile(boot, [alpha, 1 - alpha])
        null = boot - observed
        extreme = int(np.sum(np.abs(null) >= abs(observed) - 1e-12))
        p = (extreme + 1) / (n_resamples + 1)
        return PairedComparison(observed, float(low), float(high), float(min(p, 1.0)), int(d.size), method)
    if method == "permutation":
        res = stats.permutation_test(
            (x, y),
            lambda u, v, axis=-1: np.mean(u - v, axis=axis),
            permutation_type="samples",
            n_resamples=n_resamples,
            alternative="two-sided",
            vectorized=True,
            rng=rng,
        )
        ci = bootstrap_mean_ci(d, confidence=confidence, n_resamples=n_resamples, seed=seed)
        return PairedComparison(observed, ci.low, ci.high, float(res.pvalue), int(d.size), method)
    raise StatsError(f"unknown method {method!r} (bootstrap or permutation)")


def holm_bonferroni(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order.

    Sort ascending; the i-th smallest (0-based) is multiplied by (m - i); a
    running maximum keeps the adjusted values monotone; cap at 1.
    """
    p = [float(v) for v in p_values]
    for v in p:
        if not 0.0 <= v <= 1.0 or math.isnan(v):
            raise StatsError(f"p-value out of range: {v}")
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


# -- agreement coefficients ----------------------------------------------------


def cohen_kappa(
    rater_a: Sequence, rater_b: Sequence, *, weights: Literal[None, "linear", "quadratic"] = None
) -> float:
    """Cohen's kappa between two raters over the same items.

    Unweighted for nominal labels; ``linear``/``quadratic`` weights for ordinal
    (numeric) labels, where near-misses count as partial agreement.
    """
    if len(rater_a) != len(rater_b):
        raise StatsError("both raters must rate the same items")
    if len(rater_a) == 0:
        raise StatsError("no items")
    categories = sorted(set(rater_a) | set(rater_b))
    index = {c: i for i, c in enumerate(categories)}
    k = len(categories)
    observed = np.zeros((k, k))
    for u, v in zip(rater_a, rater_b):
        observed[index[u], index[v]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    if weights is None:
        disagreement = 1.0 - np.eye(k)
    else:
        try:
            values = np.asarray(categories, dtype=float)
        except (TypeError, ValueError) as exc:
            raise StatsError("weighted kappa needs numeric categories") from exc
        dist = np.abs(values[:, None] - values[None, :])
        span = values.max() - values.min() if k > 1 else 1.0
        dist = dist / span
        if weights == "linear":
            disagreement = dist
        elif weights == "quadratic":
            disagreement = dist**2
        else:
            raise StatsError(f"unknown weights {weights!r}")
    exp_dis = float((disagreement * expected).sum())
    obs_dis = float((disagreement * observed).sum())
    if exp_dis == 0:
        # Both raters used one and the same category throughout: agreement is
        # perfect but chance-corrected agreement is undefined.
        return float("nan")
    return 1.0 - obs_dis / exp_dis


def _matrix(ratings: Sequence[Sequence[float]], min_items: int = 2, min_raters: int = 2) -> np.ndarray:
    m = np.asarray(ratings, dtype=float)
    if m.ndim != 2:
        raise StatsError("ratings must be a table: one row per item, one column per rater")
    n, k = m.shape
    if n < min_items or k < min_raters:
        raise StatsError(f"need at least {min_items} items and {min_raters} raters (got {n}×{k})")
    if not np.all(np.isfinite(m)):
        raise StatsError("ratings contain missing values; keep only items every rater scored")
    return m


def icc_2_1(ratings: Sequence[Sequence[float]]) -> float:
    """ICC(2,1) (Shrout & Fleiss): two-way random effects, absolute agreement, single rater.

    From the two-way ANOVA mean squares of an items × raters table:
    (MSR − MSE) / (MSR + (k−1)·MSE + k·(MSC − MSE)/n).
    """
    m = _matrix(ratings)
    n, k = m.shape
    grand = m.mean()
    ss_rows = k * float(((m.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((m.mean(axis=0) - grand) ** 2).sum())
    ss_total = float(((m - grand) ** 2).sum())
    ss_err = ss_total - ss_rows - ss_cols
    msr = ss_rows / (n - 1)
    msc = ss_cols / (k - 1)
    mse = ss_err / ((n - 1) * (k - 1))
    denom = msr + (k - 1) * mse + k * (msc - mse) / n
    if denom == 0:
        return float("nan")
    return (msr - mse) / denom


@dataclass(frozen=True)
class KendallW:
    w: float
    chi2: float
    df: int
    p_value: float
    n_items: int
    n_raters: int


def kendall_w(ratings: Sequence[Sequence[float]]) -> KendallW:
    """Kendall's coefficient of concordance W with the tie correction.

    Each rater's scores are ranked across items (average ranks for ties);
    S is the sum of squared deviations of the items' rank sums from their mean;
    W = 12·S / (m²(n³−n) − m·ΣT), T = Σ(t³−t) over each rater's tie groups.
    Significance: χ² = m(n−1)W with n−1 degrees of freedom.
    """
    m_ = _matrix(ratings)
    n, m = m_.shape
    ranks = np.column_stack([stats.rankdata(m_[:, j]) for j in range(m)])
    rank_sums = ranks.sum(axis=1)
    s = float(((rank_sums - rank_sums.mean()) ** 2).sum())
    ties = 0.0
    for j in range(m):
        _, counts = np.unique(m_[:, j], return_counts=True)
        ties += float((counts**3 - counts).sum())
    denom = m**2 * (n**3 - n) - m * ties
    if denom == 0:
        # Every rater gave every item the same score: no ranking to agree on.
        return KendallW(float("nan"), float("nan"), n - 1, float("nan"), n, m)
    w = 12.0 * s / denom
    chi2 = m * (n - 1) * w
    p = float(stats.chi2.sf(chi2, n - 1))
    return KendallW(w, chi2, n - 1, p, n, m)


# -- correlations ----------------------------------------------------------------


@dataclass(frozen=True)
class Correlation:
    name: str  # pearson / spearman / kendall
    estimate: float
    p_value: float
    low: float
    high: float
    n: int


_CORR: dict[str, Callable] = {
    "pearson": stats.pearsonr,
    "spearman": stats.spearmanr,
    "kendall": stats.kendalltau,
}


def correlation(
    x: Sequence[float],
    y: Sequence[float],
    name: Literal["pearson", "spearman", "kendall"],
    *,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Correlation:
    """A correlation with scipy's p-value and a paired bootstrap percentile CI.

    Constant input makes a correlation undefined: estimate, p and CI are NaN
    rather than an error, so one degenerate pair does not hide the others.
    """
    a, b = _as_1d(x, "x"), _as_1d(y, "y")
    if a.size != b.size:
        raise StatsError(f"x and y differ in length ({a.size} vs {b.size})")
    if a.size < 3:
        raise StatsError("a correlation needs at least 3 paired values")
    func = _CORR.get(name)
    if func is None:
        raise StatsError(f"unknown correlation {name!r}")
    nan = float("nan")
    if np.all(a == a[0]) or np.all(b == b[0]):
        return Correlation(name, nan, nan, nan, nan, int(a.size))
    res = func(a, b)
    estimate, p = float(res.statistic), float(res.pvalue)

    def statistic(u: np.ndarray, v: np.ndarray) -> float:
        # A resample can be constant in one variable; scipy then warns and
        # returns NaN, which the percentile method below skips.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return float(func(u, v).statistic)

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, a.size, size=(n_resamples, a.size))
    boot = np.array([statistic(a[i], b[i]) for i in idx])
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        low = high = nan
    else:
        alpha = (1 - confidence) / 2
        low, high = (float(v) for v in np.quantile(boot, [alpha, 1 - alpha]))
    return Correlation(name, estimate, p, low, high, int(a.size))
