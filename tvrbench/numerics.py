"""The numeric contract for model scores: what a language model's or a sentence encoder's numbers may
depend on, and how they are rounded before anything is decided on them (docs/numerics.md).

On the CPU every model runs in float32, with two kernel choices pinned before torch computes
anything: MKL's strict conditional numerical reproducibility (``MKL_CBWR=AUTO,STRICT``: a matrix
product's sums do not depend on the thread count) and ATen's AVX2 kernels (``ATEN_CPU_CAPABILITY=avx2``:
an AVX-512 machine runs the same vector code as an AVX2 one); oneDNN is not used (its kernels follow
the oneDNN ISA: :func:`tvrbench.resources.torch_device`). So on one machine a score is the same
bits whatever the thread count, the oneDNN ISA or the Dask worker. Between CPUs MKL chooses its own
kernels (measured: at most 2.5e-5 nats a token apart); scores are therefore rounded, and every
decision is taken on the rounded value the record shows.

bfloat16 is not used on the CPU: its rounding moved scores by 0.1 nats (the size of a judge's
margins) with the kernel path and the thread count. A run outside the contract (a GPU, a half
dtype, kernels pinned otherwise) is named in the model's signature part (:func:`regime`).
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
import sys
from pathlib import Path

# Decimals scores keep, where the contract's cross-CPU differences (about 1e-5) rarely cross a step.
NATS = 2  # a log-probability gap, in nats
NATS_PER_TOKEN = 3  # a per-token mean or gap
COSINE = 3  # a cosine of embeddings or word vectors
RATIO = 3  # a relative change (perplexity difference)
PERPLEXITY = 3  # significant digits of a perplexity (from 1 to 10^5 and more)

MKL_PIN = "AUTO,STRICT"
MKL_CBWR_ALL, MKL_CBWR_STRICT = ~0, 0x10000  # mkl_service.h
ATEN_PIN = "AVX2"
CONTRACT = "float32 on the CPU"  # how the numbers outside it are named: _REGIME below
_REGIME = re.compile(r"\(((?:cpu|cuda|mps|xpu)(?:,[^()]*)?)\)$")  # a model name's last group, as regime() names it


def rounded(value: float, decimals: int) -> float:
    """``value`` at ``decimals`` places, as decided on and written."""
    return round(float(value), decimals)


def significant(value: float, digits: int) -> float:
    """``value`` to ``digits`` significant digits: a perplexity's noise is relative."""
    return float(f"{float(value):.{digits}g}")


def pin_cpu_kernels() -> None:
    """Ask for the contract's kernels, unless the user chose others (then :func:`regime` names them).
    It takes effect only before torch's first operation: importing tvrbench calls it.

    Threads that wait sleep (``OMP_WAIT_POLICY=PASSIVE``): no effect on the bits, but on a busy
    machine OpenMP's spinning threads burned 2-3.6x the CPU time (docs/performance.md)."""
    os.environ.setdefault("MKL_CBWR", MKL_PIN)
    os.environ.setdefault("ATEN_CPU_CAPABILITY", ATEN_PIN.lower())
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def regime(device: str, dtype: str) -> str:
    """'' under the contract, else what the scores depend on: ``cuda,bfloat16``, ``cpu,aten=avx512``,
    ``cpu,mkl=not-strict`` (torch computed before tvrbench was imported, or MKL_CBWR set otherwise).
    Without torch loaded no model has run yet, and the settings it will read are the environment's."""
    if device != "cpu":
        return f"{device},{dtype}"
    parts = [dtype] if dtype != "float32" else []
    torch = sys.modules.get("torch")
    capability = torch.backends.cpu.get_cpu_capability() if torch else os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    if capability != ATEN_PIN:
        parts.append(f"aten={capability.lower() or 'auto'}")
    if not (_mkl_strict() if torch else os.environ.get("MKL_CBWR", "").upper().endswith(",STRICT")):
        parts.append("mkl=not-strict")
    return ",".join(["cpu", *parts]) if parts else ""


@functools.cache
def _mkl_strict() -> bool:
    """Whether MKL runs in strict CNR mode (read from the MKL that torch links; False without one)."""
    import torch

    if not torch.backends.mkl.is_available():
        return False
    try:
        library = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / ("libtorch_cpu.dylib" if sys.platform == "darwin" else "libtorch_cpu.so")))
        return bool(library.mkl_serv_cbwr_get(ctypes.c_int(MKL_CBWR_ALL)) & MKL_CBWR_STRICT)
    except (OSError, AttributeError):  # another build: cannot tell, so not promised
        return False


def regimes_in(signature: str) -> set[str]:
    """The regimes outside the contract that a signature's model names carry (none under it)."""
    return {match.group(1) for field in re.split(r"[|;]", signature) if (match := _REGIME.search(field))}
