"""Local ranks from a notebook or a CLI: the spawn machinery behind ``helpers.core.launch`` (chapters 03, 06-08).

``spawn(fn, world_size, *args)`` starts N processes with multiprocessing's ``spawn``; each rank joins one process
group and calls ``fn(ctx, *args)`` with a :class:`RankContext`; the small picklable results come back in rank order.
Every run has a timeout, and no more local ranks than the machine runs in time (``procs.check_local_ranks``: exit 2
with the limit and why). When a rank raises, dies (also before it joined the group: its error line is named) or
hangs, the other ranks are killed (heartbeats name the rank that stopped responding, ``helpers.core.procs``), each
rank's output is kept in a per-rank log for the error, and :class:`RankFailed` names the rank in one line
(``helpers.core.rankerrors``: what failed, the fix, its log) — the kernel never hangs; a rank whose launcher died
(even by SIGKILL) ends itself. A signal (Ctrl-C, SIGTERM, SIGHUP) stops the ranks and removes the run's folder, which also
holds the ranks' TMPDIR and torch.compile's inductor cache.

The backend is chosen in one place, :func:`choose_backend`: NCCL when every rank has a GPU of its own, gloo
otherwise, and the choice carries its reason. A worker must be importable by the child processes;
:func:`importable` turns a function of a module run as ``python -m pkg.mod`` (whose ``__module__`` is
``__main__``) into the same function under its importable name, so no module has to import itself.
"""
from __future__ import annotations

import datetime
import importlib
import multiprocessing as mp
import os
import queue as _queue
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.core import procs, rankerrors
from helpers.core.rankerrors import RankFailed  # noqa: F401 - its public home is here and in launch


@dataclass(frozen=True)
class RankContext:
    rank: int
    world_size: int
    local_rank: int
    backend: str
    device: str            # "cuda:<local_rank>" under NCCL, else "cpu"


@dataclass(frozen=True)
class SpawnResult:
    world_size: int
    backend: str
    backend_reason: str
    results: tuple          # one per rank, in rank order
    elapsed_s: float


def choose_backend(world_size: int, prefer: str | None = None) -> tuple[str, str]:
    """("nccl" | "gloo", reason). NCCL needs one GPU per local rank; it refuses two ranks on one GPU."""
    import torch
    import torch.distributed as dist

    if prefer not in (None, "nccl", "gloo"):
        raise ValueError(f"backend={prefer!r}: use None (auto), 'nccl' or 'gloo'")
    n_gpu = torch.cuda.device_count() if torch.cuda.is_available() else 0
    nccl_ok = n_gpu >= world_size and dist.is_nccl_available()
    if prefer == "gloo":
        return "gloo", "gloo requested"
    if prefer == "nccl" and not nccl_ok:
        raise RuntimeError(f"backend='nccl' needs {world_size} GPUs (one per rank) and NCCL; this machine has "
                           f"{n_gpu} GPU(s). Use backend=None to fall back to gloo.")
    if nccl_ok:
        return "nccl", f"nccl: {world_size} rank(s), {n_gpu} GPU(s) — one GPU per rank"
    if n_gpu == 0:
        return "gloo", "gloo: no GPU visible, ranks run on CPU"
    return "gloo", (f"gloo: {world_size} ranks but {n_gpu} GPU(s) — NCCL needs one GPU per rank, "
                    "so the ranks run on CPU")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_group(rank: int, world_size: int, local_rank: int, backend: str, timeout_s: float) -> RankContext:
    """``init_process_group`` from MASTER_ADDR/MASTER_PORT; under NCCL this rank takes GPU ``local_rank``."""
    import torch
    import torch.distributed as dist

    device = "cpu"
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
        device = f"cuda:{local_rank}"
    kw = {"device_id": torch.device(device)} if backend == "nccl" else {}
    dist.init_process_group(backend, rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=timeout_s), **kw)
    return RankContext(rank, world_size, local_rank, backend, device)


def importable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` itself, or — for a function of a module run as ``python -m pkg.mod`` — the same function looked up
    under its importable name (``__main__.__spec__.name`` + ``__qualname__``), which child processes can load."""
    if getattr(fn, "__module__", "") != "__main__":
        return fn
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    qual = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
    found = None
    if spec is not None and spec.name and "<locals>" not in qual:
        try:
            found = importlib.import_module(spec.name)
            for part in qual.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            found = None
    if not callable(found):
        raise ValueError(f"{qual} is defined in the notebook/script; spawn needs a function from an importable "
                         "module (e.g. helpers.network.collectives) so child processes can import it")
    return found


def _entry(rank, world_size, port, backend, timeout_s, fn, args, results, log_dir, beats=None, stage=None):
    # Each rank leads its own process group, so that stopping it also stops any process it started; it dies with
    # its parent (the heartbeat thread watches it), so a killed launcher leaves no rank behind.
    os.setpgrp()
    if beats is not None:
        procs.heartbeat(beats, rank, parent=os.getppid(), folder=log_dir)
    # Child output goes to a per-rank log, not into the notebook cell (ipykernel captures fd 1/2); _start pointed
    # fd 1/2 there already, so what failed while this process loaded its worker is in the log too.
    log = open(Path(log_dir) / f"rank{rank}.log", "a")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    _run_tmp(log_dir)
    if backend == "gloo":
        # gloo ranks run on CPU; hide the GPUs before anything initialises CUDA, so that library code that
        # checks torch.cuda.is_available() (e.g. PowerSGD's hook) does not try to use a GPU these ranks don't own
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        import torch.distributed as dist

        ctx = join_group(rank, world_size, rank, backend, timeout_s)
        if stage is not None:
            stage[rank] = 1                      # joined the process group
        out = fn(ctx, *args)
        if stage is not None:
            stage[rank] = 2                      # its work is done
        results.put(("ok", rank, out))
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:
        tb = traceback.format_exc()
        sys.stderr.write(tb)                     # the rank's log keeps the traceback the one-line error names
        sys.stderr.flush()
        results.put(("error", rank, tb))
        raise SystemExit(1)


def _run_tmp(log_dir: str) -> None:
    """A rank's temporary files (and torch.compile's inductor cache, unless the user chose a folder) go inside the
    run's folder, which the parent removes after the run — after a signal too."""
    tmp = Path(log_dir) / "tmp"
    tmp.mkdir(exist_ok=True)
    os.environ["TMPDIR"] = str(tmp)
    tempfile.tempdir = None                      # gettempdir() reads TMPDIR again
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(log_dir) / "inductor"))


def spawn(fn: Callable[..., Any], world_size: int, *args: Any, backend: str | None = None,
          timeout_s: float = 60.0) -> SpawnResult:
    """Run ``fn(ctx, *args)`` on ``world_size`` ranks; return their results in rank order.

    Raises :class:`RankFailed` naming the first rank that raised or died, or the ranks still running when
    ``timeout_s`` ran out; every child is gone when this returns or raises."""
    if world_size < 1:
        raise ValueError(f"world_size={world_size}: need at least 1 rank")
    procs.check_local_ranks(world_size)
    fn = importable(fn)
    args = tuple(importable(a) if isinstance(a, types.FunctionType) else a for a in args)
    be, why = choose_backend(world_size, backend)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    beats = ctx.Array("d", world_size, lock=False)      # last heartbeat per rank (wall clock, s)
    stage = ctx.Array("i", world_size, lock=False)      # 0 started, 1 in the process group, 2 done
    log_dir = tempfile.mkdtemp(prefix="book-ranks-")
    port = free_port()
    # c10d's C++ warnings (ProcessGroupGloo.cpp, [c10d] …) stay out of the ranks' logs and errors unless debugging
    env = {} if rankerrors.debug() or "TORCH_CPP_LOG_LEVEL" in os.environ else {"TORCH_CPP_LOG_LEVEL": "ERROR"}
    t0 = time.monotonic()
    ranks = [ctx.Process(target=_entry, args=(r, world_size, port, be, timeout_s, fn, args, results, log_dir,
                                              beats, stage), daemon=True) for r in range(world_size)]
    got: dict[int, Any] = {}
    keep_logs = False
    import threading

    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            handlers[sig] = signal.signal(sig, procs.raise_stop)
    try:
        for r, p in enumerate(ranks):
            _start(p, Path(_log(log_dir, r)), env)
        deadline = t0 + timeout_s
        while len(got) < world_size:
            try:
                status, rank, payload = results.get(timeout=0.1)
            except _queue.Empty:
                dead = [r for r, p in enumerate(ranks) if p.exitcode not in (None, 0) and r not in got]
                if dead:
                    time.sleep(0.2)  # let a traceback that is on its way arrive first
                    try:
                        status, rank, payload = results.get_nowait()
                    except _queue.Empty:
                        r = dead[0]
                        raise rankerrors.died(r, world_size, ranks[r].exitcode, rankerrors.log_tail(log_dir, r),
                                              _log(log_dir, r)) from None
                elif time.monotonic() > deadline:
                    blamed, msg = procs.timeout_message(world_size, timeout_s, got, beats, stage)
                    raise RankFailed(blamed[0], msg + f" (their output: {log_dir})",
                                     rankerrors.log_tail(log_dir, blamed[0]), ranks=blamed, log=log_dir) from None
                else:
                    continue
            if status == "error":
                killed = _killed(ranks, got, rank)    # a rank killed by a signal makes its peers raise: blame it
                if killed is not None:
                    raise rankerrors.died(killed, world_size, ranks[killed].exitcode,
                                          rankerrors.log_tail(log_dir, killed), _log(log_dir, killed))
                raise rankerrors.raised(rank, world_size, payload, _log(log_dir, rank))
            got[rank] = payload
        for p in ranks:
            p.join(max(1.0, t0 + timeout_s - time.monotonic()))
    except RankFailed:
        keep_logs = True                                 # named in the error; the rest of the folder goes
        raise
    finally:
        procs.stop_all(ranks)
        results.close()
        for sig, h in handlers.items():
            signal.signal(sig, h)
        if keep_logs:
            for sub in ("tmp", "inductor"):
                shutil.rmtree(Path(log_dir) / sub, ignore_errors=True)
        else:                                            # success, Ctrl-C, SIGTERM, SIGHUP: nothing stays
            shutil.rmtree(log_dir, ignore_errors=True)
    return SpawnResult(world_size, be, why, tuple(got[r] for r in range(world_size)), time.monotonic() - t0)


def _start(p, log: Path, env: dict[str, str]) -> None:
    """Start rank process ``p`` with its fd 1/2 already on its log and ``env`` in its environment, from its first
    instruction: a rank that fails while it loads its worker (an import error, before it can join the group)
    leaves its traceback in its log — not in the user's terminal — and the launcher reports its error line."""
    saved_env = {k: os.environ.get(k) for k in env}
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except (OSError, ValueError, AttributeError):
            pass
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = [os.dup(1), os.dup(2)]
    try:
        os.environ.update(env)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        p.start()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for f in (*saved, fd):
            os.close(f)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _log(log_dir: str, rank: int) -> str:
    return str(Path(log_dir) / f"rank{rank}.log")


def _killed(ranks, got, raised_rank: int) -> int | None:
    """A rank other than ``raised_rank`` that a signal killed (its peers then fail on a closed connection)."""
    time.sleep(0.3)                                      # let the kernel report the death
    for r, p in enumerate(ranks):
        if r != raised_rank and r not in got and p.exitcode is not None and p.exitcode < 0:
            return r
    return None
