"""The elementary functions the metrics need (log2, 2^x - 1, the cube root), with the same bits on
every machine.

NumPy's log2, exp2 and cbrt take one SIMD routine on a CPU with AVX-512 (its X86_V4 code) and the C
library's elsewhere, and glibc's log2 and pow take yet another path on a CPU without FMA: their
results differ in the last bit, and so did the bytes of every result holding GMR or nDCG (issue 32;
docs/evaluation.md). Here log2 and 2^x - 1 are made of +, -, * and / alone, which IEEE 754 rounds
alike everywhere, in double-double arithmetic (a value as the unevaluated sum of two floats, about
106 bits; products split by Dekker's method, since not every CPU has FMA and numba fuses nothing
without fastmath). Each result is the float nearest the true value, but where the true value lies
within about 2^-80 of halfway between two floats (tests/evaluation/test_elementary.py checks them against
``decimal``).
The cube root, one call a result, is exactly rounded by a test in rational numbers.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

# Double-double constants: (the float nearest, the float nearest what remains); checked in the tests.
_LN2 = (float.fromhex("0x1.62e42fefa39efp-1"), float.fromhex("0x1.abc9e3b39803fp-56"))
_TWO_LOG2_E = (float.fromhex("0x1.71547652b82fep+1"), float.fromhex("0x1.777d0ffda0d24p-55"))  # 2 / ln 2
_SQRT2 = (float.fromhex("0x1.6a09e667f3bcdp+0"), -float.fromhex("0x1.bdd3413b26456p-54"))
_SQRT_HALF = 0.7071067811865476  # where log2 splits its argument's mantissa: any float near sqrt(1/2) does
_SPLITTER = 134217729.0  # 2^27 + 1: splits a float into two halves of 26 bits


def _series(fractions: list[Fraction]) -> np.ndarray:
    """A series' coefficients as double-doubles: rows of the floats nearest, and of the floats nearest what remains."""
    high = [float(c) for c in fractions]
    return np.array([high, [float(c - Fraction(h)) for c, h in zip(fractions, high)]])


_ATANH_SERIES = _series([Fraction(1, 2 * i + 1) for i in range(18)])  # atanh(t) / t in t^2
_EXPM1_SERIES = _series([Fraction(1, math.factorial(i + 1)) for i in range(18)])  # (e^u - 1) / u in u


@numba.njit(cache=True, inline="always")
def _two_sum(a, b):
    """a + b as (the rounded sum, its rounding error), both exact."""
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


@numba.njit(cache=True, inline="always")
def _quick_two_sum(a, b):
    """The same for |a| >= |b|: the normal form of a double-double."""
    total = a + b
    return total, b - (total - a)


@numba.njit(cache=True, inline="always")
def _two_product(a, b):
    """a x b as (the rounded product, its rounding error), both exact."""
    product = a * b
    scaled = _SPLITTER * a
    a_high = scaled - (scaled - a)
    a_low = a - a_high
    scaled = _SPLITTER * b
    b_high = scaled - (scaled - b)
    b_low = b - b_high
    return product, ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low


@numba.njit(cache=True, inline="always")
def _add(a, b):
    high, low = _two_sum(a[0], b[0])
    return _quick_two_sum(high, low + (a[1] + b[1]))


@numba.njit(cache=True, inline="always")
def _multiply(a, b):
    high, low = _two_product(a[0], b[0])
    return _quick_two_sum(high, low + (a[0] * b[1] + a[1] * b[0]))


@numba.njit(cache=True, inline="always")
def _polynomial(x, series, exact_terms):
    """sum(series[i] x^i) by Horner's rule, the terms past ``exact_terms`` in floats."""
    tail = 0.0
    for i in range(series.shape[1] - 1, exact_terms - 1, -1):
        tail = tail * x[0] + series[0, i]
    total = (tail, 0.0)
    for i in range(exact_terms - 1, -1, -1):
        total = _add(_multiply(total, x), (series[0, i], series[1, i]))
    return total


@numba.njit(cache=True)
def log2(x):
    """log2(x): ``x = m 2^e`` with ``m`` in [sqrt(1/2), sqrt(2)), and ``ln m = 2 atanh(t)``, ``t = (m - 1)
    / (m + 1)``, as the series ``2 t sum(t^2i / (2i + 1))`` (|t| < 0.172: 18 terms; those below 2^-34
    of the sum in floats)."""
    if not 0.0 < x < np.inf:
        return np.nan if not x >= 0.0 else -np.inf if x == 0.0 else x
    m, e = math.frexp(x)
    if m < _SQRT_HALF:
        m, e = 2.0 * m, e - 1
    difference = m - 1.0  # exact, as is m + 1 in two parts
    total = _two_sum(m, 1.0)
    high = difference / total[0]
    product, error = _two_product(high, total[0])
    t = _quick_two_sum(high, (((difference - product) - error) - high * total[1]) / total[0])
    series = _polynomial(_multiply(t, t), _ATANH_SERIES, 6)
    return _add((float(e), 0.0), _multiply(_multiply(t, series), _TWO_LOG2_E))[0]


@numba.njit(cache=True)
def exp2m1(x):
    """2^x - 1 for x >= 0 (NaN below: nDCG's gains are positive; below 2^-900 the last bit may be off,
    as Dekker's products underflow): ``x = k + h / 2 + r`` with whole ``k``, ``h`` in {0, 1, 2} and
    |r| <= 1/4, so ``2^x = 2^k 2^(h/2) e^u`` with ``u = r ln 2``, and ``e^u - 1 = u sum(u^i / (i + 1)!)``
    (|u| < 0.18: 18 terms; those below 2^-38 of the sum in floats)."""
    if not 0.0 <= x < 1024.0:
        return np.inf if x >= 1024.0 else np.nan
    whole = math.floor(x)
    fraction = x - whole  # exact, in [0, 1)
    halves = math.floor(2.0 * fraction + 0.5)
    u = _multiply((fraction - 0.5 * halves, 0.0), _LN2)  # the reduction is exact
    minus_one = _multiply(u, _polynomial(u, _EXPM1_SERIES, 8))  # e^u - 1
    if halves == 1:  # sqrt(2) e^u - 1 = (sqrt(2) - 1) + sqrt(2) (e^u - 1)
        minus_one = _add(_quick_two_sum(_SQRT2[0] - 1.0, _SQRT2[1]), _multiply(_SQRT2, minus_one))
    elif halves == 2:  # 2 e^u - 1 = 1 + 2 (e^u - 1)
        minus_one = _add((1.0, 0.0), (2.0 * minus_one[0], 2.0 * minus_one[1]))
    if whole == 0:
        return minus_one[0]
    scaled = (math.ldexp(minus_one[0], whole), math.ldexp(minus_one[1], whole))  # 2^k (2^f - 1) + (2^k - 1)
    return _add(scaled, _two_sum(math.ldexp(1.0, whole), -1.0))[0]


def cube_root(x: float) -> float:
    """The float nearest x^(1/3), exactly: ``math.cbrt``'s answer (within a unit in the last place)
    moved to the float whose neighbours' midpoints, cubed in rationals, enclose x."""
    if x < 0:
        return -cube_root(-x)
    root = math.cbrt(x)
    if not 0.0 < root < math.inf:
        return root
    eight_x = 8 * Fraction(x)  # (root + neighbour)^3 against 8x: the midpoint's cube against x
    while (Fraction(root) + Fraction(lower := math.nextafter(root, 0.0))) ** 3 > eight_x:
        root = lower
    while (Fraction(root) + Fraction(upper := math.nextafter(root, math.inf))) ** 3 < eight_x:
        root = upper
    return root
