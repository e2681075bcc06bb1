"""User-facing input errors: where, which key, what was expected, did you mean.

Every mistake in a scenario, a catalog file or a command-line override ends as
an :class:`InputError` holding one or more :class:`Problem` rows. The CLI
prints them, sorted by position, and exits with status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One mistake, located. ``line``/``column`` are 1-based; 0 when unknown."""

    file: str
    line: int
    column: int
    path: str
    message: str

    def __str__(self) -> str:
        where = self.file if not self.line else f"{self.file}:{self.line}:{self.column}"
        key = f" {self.path}:" if self.path else ""
        return f"{where}:{key} {self.message}"


class InputError(Exception):
    """Bad input from the user; carries every problem found, sorted by position."""

    def __init__(self, problems: Iterable[Problem]):
        unique = sorted(set(problems))
        self.problems = unique
        super().__init__("\n".join(str(p) for p in unique))


def close_matches(word: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The choices closest to ``word``, closest first (as written, else ignoring case); none
    when none is close."""
    choices = [str(c) for c in choices]
    close = difflib.get_close_matches(str(word), choices, n=n, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in choices}
        close = [lowered[c] for c in difflib.get_close_matches(str(word).lower(), lowered, n=n, cutoff=0.6)]
    return close


def did_you_mean(word: str, choices: Iterable[str], n: int = 3) -> str:
    """' (did you mean 'x'?)' for the closest choices (:func:`close_matches`), or '' when none is close."""
    close = close_matches(word, choices, n)
    if not close:
        return ""
    return " (did you mean " + " or ".join(f"'{c}'" for c in close) + "?)"


class SolverError(Exception):
    """The optimiser returned no proven plan (time limit, numerical trouble): not the
    user's mistake, and never to be shown as a plan. The CLI prints it and exits 1."""


class LayerWarning(UserWarning):
    """A refreshed price layer that cannot be read: plans go on with the shipped catalog."""
