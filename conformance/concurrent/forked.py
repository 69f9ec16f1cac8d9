"""Work shared out to forked processes, its results handed back in order, and an end nothing can hold up.

Not `multiprocessing.Pool`, for its two ways of waiting for ever: its end (`terminate`) kills workers that may hold
the lock of the queue its own threads write to next (CPython issue 96995, open), and a worker that dies (the
out-of-memory killer) leaves its task unanswered while the pool starts another (bpo-22393). Here each worker writes
to a pipe of its own, which only a thread of this process reads; the one lock the workers share (which chunk comes
next) this process never takes; a worker that ends without its results is an error (`WorkerLost`) as soon as its
pipe closes; and the end is a SIGKILL each and a join, which no lock can hold up.

Ctrl-C (and a SIGTERM to the group) reaches every process: the workers are born with both held back and then ignore
them, leaving the stop to this process, which ends them all; were they to die of it, this process could take that
for a lost worker before its own stop.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import queue
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

R = TypeVar("R")
_STOPS = {signal.SIGINT, signal.SIGTERM}
_PR_SET_PDEATHSIG = 1  # prctl(2)


class WorkerLost(RuntimeError):
    """A forked worker ended without handing back all its results (killed, most likely by the out-of-memory
    killer), or raised."""


class _Done:
    """What a worker sends last, once it has sent every result it took on."""


class _Raised:
    """What a worker sends in place of its results when its work raised (the traceback), or what stands for a
    worker that ended without saying it was done (no traceback: it was killed)."""

    def __init__(self, error: str) -> None:
        self.error = error


@contextmanager
def in_order(work: Callable[[int], R], count: int, workers: int, chunk: int = 1) -> Iterator[Iterator[R]]:
    """`work(0)`, ..., `work(count - 1)`, in that order, each as soon as it and those before it are done, by
    `workers` forked processes taking `chunk` indices at a time. They start at once (the block may do its own
    work meanwhile) and inherit what this process holds, so `work` is never pickled, only its results. A worker
    that raised, or ended before handing back the results it took on, raises `WorkerLost` where the next result
    was awaited. Leaving the block (at the end, a stop, an error) ends them."""
    context = multiprocessing.get_context("fork")
    next_chunk = context.Value("q", 0)
    arrived: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
    processes, pipes, reading = [], [], None
    # Born with Ctrl-C held back, until each worker ignores it and this process has them to end
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        for _ in range(max(1, min(workers, -(-count // chunk)))):
            reader, writer = context.Pipe(duplex=False)
            pipes.append(reader)
            process = context.Process(target=_serve, args=(work, count, chunk, next_chunk, writer, os.getpid()),
                                      daemon=True)
            process.start()
            processes.append(process)
            writer.close()  # the worker's end: once it exits, its pipe reads as closed (later workers never get it)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        reading = threading.Thread(target=_read, args=(pipes, arrived), name="forked-results", daemon=True)
        reading.start()
        yield _in_order(arrived, count)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
        for process in processes:
            process.kill()
        for process in processes:
            process.join()
        if reading is not None:
            reading.join()  # every pipe now reads as closed
        for reader in pipes:
            reader.close()


def _serve(work: Callable[[int], Any], count: int, chunk: int, next_chunk: Any, pipe: Connection,
           parent: int) -> None:
    _die_with(parent)
    for stop in _STOPS:
        signal.signal(stop, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOPS)
    try:
        while True:
            with next_chunk.get_lock():
                start = next_chunk.value * chunk
                next_chunk.value += 1
            if start >= count:
                break
            # A chunk's results in one message, as one pickle: what they share is sent once
            pipe.send((start, [work(index) for index in range(start, min(start + chunk, count))]))
        pipe.send((-1, _Done()))
    except BaseException:  # noqa: BLE001 - handed to the parent, which raises it as its own
        pipe.send((-1, _Raised(traceback.format_exc())))


def _die_with(parent: int) -> None:
    """Where the kernel offers it (Linux), this worker is killed as soon as the process that forked it dies (a
    SIGKILL, the out-of-memory killer), which cannot end it otherwise: it would search on for nothing."""
    try:
        set_death_signal = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    if set_death_signal(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0 and os.getppid() != parent:
        os._exit(1)  # it died before this worker asked


def _read(pipes: list[Connection], arrived: queue.SimpleQueue[tuple[int, Any]]) -> None:
    """Each worker's results as they come, until every pipe is closed; a pipe closed before its worker said it
    was done, as a `_Raised`."""
    open_pipes = list(pipes)
    done: set[Connection] = set()
    while open_pipes:
        for pipe in wait(open_pipes):
            assert isinstance(pipe, Connection)
            try:
                start, result = pipe.recv()
            except (EOFError, OSError):
                open_pipes.remove(pipe)
                if pipe not in done:
                    arrived.put((-1, _Raised("")))
                continue
            if isinstance(result, _Done):
                done.add(pipe)
            elif isinstance(result, _Raised):
                arrived.put((-1, result))
            else:
                for offset, one in enumerate(result):
                    arrived.put((start + offset, one))


def _in_order(arrived: queue.SimpleQueue[tuple[int, Any]], count: int) -> Iterator[Any]:
    early: dict[int, Any] = {}
    for wanted in range(count):
        while wanted not in early:
            index, result = arrived.get()
            if isinstance(result, _Raised):
                raise WorkerLost(
                    f"a checking process failed:\n{result.error}" if result.error else
                    "a checking process was killed before it handed back its results (out of memory?)")
            early[index] = result
        yield early.pop(wanted)
