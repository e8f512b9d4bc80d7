"""tvrbench: honest text-video retrieval benchmarks.

Three capabilities, each from a paper: FIRE relevance labels and their validity analyses
(``tvrbench.evaluation``), semantic-proxy relevance for nDCG (``tvrbench.proxies``), and
contrast sets with hard-negative multiple-choice splits (``tvrbench.generators``).
"""

__version__ = "0.1.0"

from tvrbench.numerics import pin_cpu_kernels  # noqa: E402 - before any torch computation in this process

pin_cpu_kernels()
