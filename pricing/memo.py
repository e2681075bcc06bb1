"""A small per-process memo for tables that a what-if plans again and again.

A sensitivity run or a sweep plans one scenario dozens of times with one
input changed; the catalog's tables and most derived tables are the same
objects each time. :class:`Kept` remembers a result by the identity of the
tables it came from plus a hashable key. Each entry keeps those tables alive,
so a new table can never reuse an old one's id and take its entry. Callers
must treat what they get back as read-only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")

EVERY: list[Kept | ByValue] = []


def clear_all() -> None:
    """Forget every kept result (tests compare answers with and without them)."""
    for memo in EVERY:
        memo._entries.clear()


class Kept:
    def __init__(self, size: int = 16):
        self.size = size
        self._entries: dict[tuple, tuple[tuple, Any]] = {}
        EVERY.append(self)

    def get(self, tables: tuple, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()``, or what it returned before for these very ``tables`` and an equal ``key``.
        Full, it forgets the result used least recently: the base scenario's tables, which every
        plan of a what-if that edits the scenario reads, stay while its edited prices come and go
        (forgetting every result at once made 4 of a lab's sensitivity's plans build their
        options whole again, 18 ms each)."""
        k = (tuple(map(id, tables)), key)
        hit = self._entries.get(k)
        if hit is None or any(a is not b for a, b in zip(hit[0], tables)):
            if len(self._entries) >= self.size:
                del self._entries[next(iter(self._entries))]
            hit = self._entries[k] = (tables, make())
        else:
            self._entries[k] = self._entries.pop(k)  # used last: forgotten last
        return hit[1]

    def alike(self, key: tuple) -> list[tuple[tuple, Any]]:
        """What is kept under an equal ``key``, used most recently first, with the tables it came
        from ((tables, result) pairs): for a caller that derives a new result from an old one."""
        return [hit for (_, k), hit in reversed(self._entries.items()) if k == key]


class ByValue:
    """Results by an equal key alone: the key holds every value a result depends on (a row of
    a table, not the table), so a new table with the same row finds it."""

    def __init__(self, size: int):
        self.size = size
        self._entries: dict[Hashable, Any] = {}
        EVERY.append(self)

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        hit = self._entries.get(key)
        if hit is None:
            if len(self._entries) >= self.size:
                self._entries.clear()
            hit = self._entries[key] = make()
        return hit


def frozen(value: Any) -> Any:
    """A value as a hashable key, equal when the value is (dicts and lists inside turned into
    tuples, a dict's items sorted by key): what a kept result is found by, where its inputs are
    a scenario's or a file's rows."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(frozen(v) for v in value)
    return value


def per_table(function: Callable[[pd.DataFrame], T]) -> Callable[[pd.DataFrame], T]:
    """``function`` of one table and nothing else, its result kept per table (:class:`Kept`: by
    the table's identity, the table kept alive): for what a plan reads of its options table as
    a whole, which a what-if that moves a phase's hours plans again unchanged. Read-only."""
    kept = Kept()

    @functools.wraps(function)
    def of_table(table: pd.DataFrame) -> T:
        return kept.get((table,), (), lambda: function(table))

    return of_table
