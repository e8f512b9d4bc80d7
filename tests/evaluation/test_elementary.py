"""The metrics' log2, 2^x - 1 and cube root are exactly rounded, and so an evaluation's bytes do not
depend on the CPU: NumPy's own routines (SIMD on AVX-512) and glibc's (FMA or not) differ in the last bit.

The oracle is Python's ``decimal`` at 60 digits (its ln and exp are correctly rounded; float() of a
Decimal rounds to nearest), far beyond the two floats' worth a double-double holds.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from decimal import Decimal, localcontext
from pathlib import Path

import numpy as np
import pytest

from tvrbench.evaluation import elementary
from tvrbench.evaluation.elementary import cube_root, exp2m1, log2

ROOT = Path(__file__).resolve().parents[2]


def _exact(function, x: float) -> float:
    with localcontext() as context:
        context.prec = 60
        return float(function(Decimal(x)))


def _log2(x: Decimal) -> Decimal:
    return x.ln() / Decimal(2).ln()


def _exp2m1(x: Decimal) -> Decimal:
    return (x * Decimal(2).ln()).exp() - 1


def _cube_root(x: Decimal) -> Decimal:
    return x ** (Decimal(1) / 3)


def test_the_constants_are_the_double_doubles_of_their_values():
    constants = {"_LN2": lambda: Decimal(2).ln(), "_TWO_LOG2_E": lambda: 2 / Decimal(2).ln(), "_SQRT2": lambda: Decimal(2).sqrt()}
    for name, function in constants.items():
        high, low = getattr(elementary, name)
        with localcontext() as context:
            context.prec = 60
            value = function()
            assert (high, low) == (float(value), float(value - Decimal(high))), name


def test_log2_is_the_float_nearest_the_true_value():
    rng = np.random.default_rng(0)
    ranks = np.arange(2.0, 4002.0, 0.5)  # the discounts' arguments: rank + 1, whole or half under average ties
    wide = np.exp(rng.uniform(-700, 700, 4000))
    edges = [1.0, 0.5, 2.0, 3.0, 0.75, 1 + 2**-52, 1 - 2**-53, 2.0**-1074, 2.0**-1022, np.finfo(float).max]
    for x in [*ranks, *wide, *edges]:
        assert log2(x) == _exact(_log2, x), x
    assert log2(0.0) == -math.inf and log2(math.inf) == math.inf and math.isnan(log2(-1.0)) and math.isnan(log2(math.nan))


def test_exp2m1_is_the_float_nearest_the_true_value():
    rng = np.random.default_rng(1)
    relevance = rng.random(4000)  # nDCG's paper gains 2^s - 1: s in [0, 1], often float32
    edges = [0.0, 1.0, 0.25, 0.5, 0.75, 2.0, 1e-30, 2.0**-60, 1023.5]
    for x in [*relevance, *relevance.astype(np.float32).astype(float), *rng.uniform(1, 60, 1000), *edges]:
        assert exp2m1(x) == _exact(_exp2m1, x), x
    assert exp2m1(1024.0) == math.inf and math.isnan(exp2m1(-0.5)) and math.isnan(exp2m1(math.nan))


def test_cube_root_is_the_float_nearest_the_true_value():
    rng = np.random.default_rng(2)
    products = [(a / 112) * (b / 112) * (c / 112) for a, b, c in rng.integers(1, 113, (2000, 3))]  # GMR: C@1 C@5 C@10
    for x in [*products, *rng.random(2000), *np.exp(rng.uniform(-700, 700, 1000)), 8.0, 27.0, 2.0**-1074]:
        assert cube_root(x) == _exact(_cube_root, x), x
    assert cube_root(-8.0) == -2.0 and cube_root(0.0) == 0.0 and math.isnan(cube_root(math.nan))
    assert sum(math.cbrt(x) != cube_root(x) for x in products) > 100  # the C library's is not exactly rounded


def evaluation_bytes() -> str:
    """The JSON of evaluations that take every path through log2, 2^x - 1 and the cube root: the
    sample's strong model with its FIRE labels (GMR, nDCG), every nDCG variant under average ties on
    graded relevance, video-to-text nDCG with 2,500 positives a video (discounts past rank 1,620,
    where NumPy's AVX-512 log2 first differs from glibc's), and a fractional rank of a tall column."""
    from tvrbench.data import SAMPLE_DIR
    from tvrbench.evaluation import Judgments, evaluate
    from tvrbench.io.captions import read_captions, read_video_ids
    from tvrbench.io.fire import read_fire

    captions = read_captions(SAMPLE_DIR / "captions.csv")
    fire = read_fire(SAMPLE_DIR / "fire.json", "SAMPLE", cache=False)
    judgments = Judgments.build(captions, read_video_ids(SAMPLE_DIR / "videos.txt"), fire=fire)
    scores = np.load(SAMPLE_DIR / "scores_strong.npy")
    results = [evaluate(scores, judgments)]
    rng = np.random.default_rng(0)
    relevance = rng.random(scores.shape).astype(np.float32)
    for variant in ("epic", "paper", "full"):
        results.append(evaluate(np.round(scores, 1), judgments, ["nDCG", "GMR"], ties="average", ndcg=variant, relevance=relevance))
    tall = rng.standard_normal((2500, 4))
    results.append(evaluate(tall, Judgments.from_matrices(np.eye(2500, 4, dtype=bool)), ["nDCG"], relevance=rng.random(tall.shape) + 0.01))
    column = np.concatenate([np.linspace(2, 1, 64320), [0.5, 0.5], np.zeros(80)])[:, None]  # a positive at rank 64,321.5 ...
    positive = np.zeros(column.shape, bool)
    positive[64320] = True  # ... where glibc's log2 (of rank + 1) depends on FMA
    results.append(evaluate(column, Judgments.from_matrices(positive), ["nDCG"], ties="average", ndcg="full"))
    return json.dumps([result.to_json() for result in results] + [{k: v.tolist() for k, v in r.per_query.items()} for r in results])


@pytest.mark.parametrize(
    "environment",
    [
        {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"},  # NumPy without its AVX-512 routines (no-op on a CPU without them)
        {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4"},  # glibc's libm as on a CPU without FMA
    ],
    ids=["numpy-without-avx512", "glibc-without-fma"],
)
def test_evaluation_bytes_do_not_depend_on_the_cpu(environment):
    here = str(Path(__file__).resolve().parent)
    code = f"import sys; sys.path.insert(0, {here!r}); from test_elementary import evaluation_bytes; print(evaluation_bytes())"
    env = dict(os.environ, PYTHONPATH=str(ROOT), **environment)
    other = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert other == evaluation_bytes()
