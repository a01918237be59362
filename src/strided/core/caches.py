"""Every cache strided keeps, in one list: its name, what it is keyed by, its bound, and
whether it depends on the thread count (``set_num_threads`` clears those).

Keys are values (layouts, dtypes, shapes, op names), never object identities, so
an entry is reused by any tensor with the same layout.  No entry stands in for a
check against a buffer: the op layer still measures every buffer against the
entry's reach before a kernel runs.
"""

from __future__ import annotations

import functools


class Cache(dict):
    """A dict that empties itself when it would pass its bound."""

    __slots__ = ("name", "key", "bound", "threads")

    def __init__(self, name: str, key: str, bound: int, threads: bool):
        super().__init__()
        self.name, self.key, self.bound, self.threads = name, key, bound, threads

    def put(self, key, value):
        if self.bound is not None and len(self) >= self.bound:
            self.clear()
        self[key] = value
        return value


class _Lru:
    """A ``functools.lru_cache`` entry of the inventory."""

    __slots__ = ("name", "key", "bound", "threads", "fn")

    def __init__(self, name, key, fn, threads):
        self.name, self.key, self.fn, self.threads = name, key, fn, threads
        self.bound = fn.cache_info().maxsize

    def clear(self):
        self.fn.cache_clear()

    def __len__(self):
        return self.fn.cache_info().currsize


INVENTORY: list = []


def cache(name: str, key: str, bound: int | None, *, threads: bool = False) -> Cache:
    """A new bounded cache, listed in the inventory."""
    c = Cache(name, key, bound, threads)
    INVENTORY.append(c)
    return c


def table(name: str, key: str, *, threads: bool = False) -> Cache:
    """A cache that never evicts (one entry per op, dtype or kernel source: bounded by what the
    program uses), listed in the inventory with no bound."""
    return cache(name, key, None, threads=threads)


def lru(name: str, key: str, maxsize: int, *, threads: bool = False):
    """``functools.lru_cache(maxsize)``, listed in the inventory."""
    def wrap(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)
        INVENTORY.append(_Lru(name, key, cached, threads))
        return cached
    return wrap


def clear(threads_only: bool = False) -> None:
    """Empty every cache (or those that depend on the thread count)."""
    for c in INVENTORY:
        if c.threads or not threads_only:
            c.clear()


def inventory() -> list[tuple[str, str, int, bool, int]]:
    """(name, key, bound, thread-dependent, entries now) for every cache."""
    return [(c.name, c.key, c.bound, c.threads, len(c)) for c in INVENTORY]
