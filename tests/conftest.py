"""Suite-wide setup: no test writes into the real user's cache directory.

The router's digest cache falls back to ``$XDG_CACHE_HOME`` for a package it
may not write (case/digest_cache.py); the suite points it at a temporary
directory, which subprocesses (the CLI tests) inherit.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_user_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = previous
