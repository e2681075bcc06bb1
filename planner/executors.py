"""Where a what-if's plain runs go: this machine's processes, or a Dask cluster.

``sweep``, ``sensitivity``, ``explore`` and ``compare`` plan many variants of one scenario; each
variant is a plain run (:func:`planner.whatif.tables.run_one`) of a :class:`~planner.whatif.tables.Job`
(frozen text and values: it pickles), so any executor with ``map`` in order runs them and the
table is byte for byte the same. A Dask cluster (``--scheduler tcp://host:8786`` or
``DASK_SCHEDULER_ADDRESS``) needs the ``cluster`` extra (``pip install "gpu-planner[cluster]"``)
on this machine and on every worker, with the same planner and catalog (files given with
``--catalog`` must be at the same paths on the workers).
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from pricing.errors import InputError, Problem

#: Where what-if runs go: a count of local processes, or a Dask scheduler's address.
Workers = int | str

#: How long to wait for a Dask scheduler to answer [s].
CONNECT_TIMEOUT_S = 15

#: A piece of work: a function and the one item it takes (each pickles for a worker).
Task = tuple[Callable[[Any], Any], Any]


@contextlib.contextmanager
def executor(workers: int, scheduler: str | None = None) -> Iterator[Callable[[Callable[[Any], Any], Iterable[Any]],
                                                                             Iterator[Any]]]:
    """A ``map`` (function, items) -> results in order: a Dask cluster's where ``scheduler`` names
    one, else ``workers`` local processes (forked: they start with this process's caches)."""
    with _pool(workers, scheduler) as pool:
        yield pool.map


@contextlib.contextmanager
def _pool(workers: int, scheduler: str | None = None) -> Iterator[Any]:
    """A concurrent.futures executor (``map``, ``submit``): a Dask cluster's where ``scheduler``
    names one, else ``workers`` local processes (forked: they start with this process's caches)."""
    if scheduler:
        client = _client(scheduler)
        try:
            with client.get_executor() as pool:
                yield pool
        finally:
            client.close()
        return
    with ProcessPoolExecutor(max_workers=workers) as local:
        yield local


def _client(scheduler: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise InputError([Problem("--scheduler", 0, 0, scheduler, "a Dask cluster needs the 'cluster' extra: "
                                  "pip install \"gpu-planner[cluster]\" (dask[distributed])")]) from None
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        raise InputError([Problem("--scheduler", 0, 0, scheduler, f"no Dask scheduler answers there ({exc}); "
                                  "start one with 'dask scheduler' and workers with 'dask worker ADDRESS'")]) from None


def run_all(function: Callable[[Any], Any], items: Sequence[Any], workers: Workers,
            progress: Callable[[int], None] | None = None) -> list[Any]:
    """``function`` over ``items``, in order (:func:`run_growing`, adding no work): here (one
    worker, or fewer than four items, which a pool would not repay), on ``workers`` local
    processes (no more than the items), or on the Dask cluster whose scheduler address
    ``workers`` is; ``progress(1)`` as each ends."""
    if isinstance(workers, int):
        workers = 1 if len(items) < 4 else min(workers, len(items))

    def ended(_number: int, _result: Any) -> Sequence[Task]:
        if progress:
            progress(1)
        return ()

    return run_growing([(function, item) for item in items], workers, ended)


@contextlib.contextmanager
def rounds(workers: Workers) -> Iterator[Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]]]:
    """A ``run(function, items) -> results in order`` for many rounds of runs on one pool: here
    for one worker, else ``workers`` local processes (started once, not a round) or the Dask
    cluster whose scheduler address ``workers`` is. For work that comes in small rounds, each
    waiting on the last (explore's grid): :func:`run_all` runs fewer than four items here, so
    rounds of one or two would leave the other cores idle."""
    if isinstance(workers, int) and workers <= 1:
        yield lambda function, items: [function(item) for item in items]
        return
    with executor(workers if isinstance(workers, int) else 1, workers if isinstance(workers, str) else None) as mapped:
        yield lambda function, items: list(mapped(function, items))


def run_growing(tasks: Sequence[Task], workers: Workers, then: Callable[[int, Any], Sequence[Task]]) -> list[Any]:
    """Each task's result, by its number: ``tasks`` first numbered 0, 1, ..., and those that
    ``then(number, result)``, called here as each task ends, adds after them, numbered on. Added
    tasks start before the given ones not yet started: work that waits on a result (a flip's
    search on its input's two sides) runs beside the rest, not after all of it, so no core idles
    while the last searches run (sensitivity: bench/lab-boxes.yaml 2.56 -> 2.43 s on two cores).
    Here for one worker; else on ``workers`` local processes (two tasks handed to each at a
    time: one running, one waiting), or on the Dask cluster whose scheduler address ``workers``
    is (64 at a time). The results do not depend on the order tasks end in: each task is a pure
    function of its item."""
    waiting: collections.deque[tuple[int, Task]] = collections.deque(enumerate(tasks))
    added: collections.deque[tuple[int, Task]] = collections.deque()
    results: dict[int, Any] = {}
    count = len(tasks)

    def ended(number: int, result: Any) -> None:
        nonlocal count
        results[number] = result
        for task in then(number, result):
            added.append((count, task))
            count += 1

    def next_task() -> tuple[int, Task]:
        return added.popleft() if added else waiting.popleft()

    if isinstance(workers, int) and workers <= 1:
        while added or waiting:
            number, (function, item) = next_task()
            ended(number, function(item))
        return [results[k] for k in range(count)]
    scheduler = workers if isinstance(workers, str) else None
    slots = 2 * workers if isinstance(workers, int) else 64
    with _pool(workers if isinstance(workers, int) else 1, scheduler) as pool:
        running: dict[Future, int] = {}
        while added or waiting or running:
            while (added or waiting) and len(running) < slots:
                number, (function, item) = next_task()
                running[pool.submit(function, item)] = number
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.__getitem__):
                ended(running.pop(future), future.result())
    return [results[k] for k in range(count)]
