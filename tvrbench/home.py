"""tvrbench's own folder (``$TVRBENCH_HOME``). It sits in the bottom layer because the FIRE reader
(``io``) keeps its parses there, as the resource loaders and generators above it keep theirs."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where tvrbench keeps prepared resources and parse caches (``$TVRBENCH_HOME``)."""
    root = os.environ.get("TVRBENCH_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "tvrbench")
    return Path(root)
