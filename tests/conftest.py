"""Test-wide settings."""

import os

# As the tvrbench command does (tvrbench.cli.main): numba's sleeping thread pool, not OpenMP's spinning one.
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
