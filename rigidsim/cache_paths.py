"""Where rigidsim keeps its on-disk caches (no import beyond the standard library, for the loaders).

``$RIGIDSIM_CACHE_DIR`` when set, else ``~/.cache/rigidsim``, is the cache root:

* compiled kernels: ``~/.cache/rigidsim/kernels``, or ``$RIGIDSIM_CACHE_DIR`` itself
  (`rigidsim.engine.runtime.cache_dir`, which keeps one folder per engine source there);
* compiled models: ``<root>/models`` (`rigidsim.loaders.model_cache`).
"""

from __future__ import annotations

import os
from pathlib import Path

CACHE_DIR_ENV = "RIGIDSIM_CACHE_DIR"


def cache_root() -> Path:
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env) if env else Path.home() / ".cache" / "rigidsim"


def model_cache_dir() -> Path:
    return cache_root() / "models"
