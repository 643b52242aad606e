"""Start N ranks of a distributed job, from a notebook or from the real launchers (chapters 03, 06-08).

Two ways, one worker function:

* ``spawn(fn, world_size, *args)`` — in a notebook: N processes via multiprocessing's ``spawn``; each rank calls
  ``fn(ctx, *args)`` with a :class:`RankContext` and returns a small picklable result.
* ``torchrun(module, args, nproc)`` — the real launcher, ``python -m torch.distributed.run --standalone …``;
  inside the module, ``init_from_env()`` builds the same :class:`RankContext` from the variables torchrun or
  Slurm's ``srun`` set (RANK/WORLD_SIZE/LOCAL_RANK or SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID).

The backend is chosen in one place, :func:`choose_backend`: NCCL when every rank has a GPU of its own, gloo
otherwise, and the choice carries its reason. Every run has a timeout. When a rank raises, dies or hangs, the
other ranks are killed, and :class:`RankFailed` names the rank with its traceback — the kernel never hangs.

``fn`` must live in an importable module (a function defined in a notebook cannot be pickled for ``spawn``).
"""
from __future__ import annotations

import datetime
import multiprocessing as mp
import os
import queue as _queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.core import procs


class RankFailed(RuntimeError):
    """A rank raised, died or hung. ``rank`` is the first failing rank (None if unknown)."""

    def __init__(self, rank: int | None, message: str, detail: str = "", ranks: Sequence[int] = ()):
        self.rank, self.detail = rank, detail
        self.ranks = tuple(ranks) or ((rank,) if rank is not None else ())  # every rank at fault
        super().__init__(message + (f"\n{detail}" if detail else ""))


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


@dataclass(frozen=True)
class TorchrunResult:
    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
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


def _init(rank: int, world_size: int, local_rank: int, backend: str, timeout_s: float) -> RankContext:
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


def _entry(rank, world_size, port, backend, timeout_s, fn, args, results, log_dir, beats=None, stage=None):
    # Each rank leads its own process group, so that stopping it also stops any process it started.
    os.setpgrp()
    if beats is not None:
        procs.heartbeat(beats, rank)
    # Child output goes to a per-rank log, not into the notebook cell (ipykernel captures fd 1/2).
    log = open(Path(log_dir) / f"rank{rank}.log", "w")
    os.dup2(log.fileno(), 1)
    os.dup2(log.fileno(), 2)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    if backend == "gloo":
        # gloo ranks run on CPU; hide the GPUs before anything initialises CUDA, so that library code that
        # checks torch.cuda.is_available() (e.g. PowerSGD's hook) does not try to use a GPU these ranks don't own
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        import torch.distributed as dist

        ctx = _init(rank, world_size, rank, backend, timeout_s)
        if stage is not None:
            stage[rank] = 1                      # joined the process group
        out = fn(ctx, *args)
        if stage is not None:
            stage[rank] = 2                      # its work is done
        results.put(("ok", rank, out))
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:
        results.put(("error", rank, traceback.format_exc()))
        raise SystemExit(1)


def spawn(fn: Callable[..., Any], world_size: int, *args: Any, backend: str | None = None,
          timeout_s: float = 60.0) -> SpawnResult:
    """Run ``fn(ctx, *args)`` on ``world_size`` ranks; return their results in rank order.

    Raises :class:`RankFailed` naming the first rank that raised or died, or the ranks still running when
    ``timeout_s`` ran out; every child is gone when this returns or raises."""
    if world_size < 1:
        raise ValueError(f"world_size={world_size}: need at least 1 rank")
    if getattr(fn, "__module__", "") == "__main__":
        raise ValueError(f"{fn.__name__} is defined in the notebook/script; spawn needs a function from an "
                         "importable module (e.g. helpers.network.collectives) so child processes can import it")
    be, why = choose_backend(world_size, backend)
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    beats = ctx.Array("d", world_size, lock=False)      # last heartbeat per rank (wall clock, s)
    stage = ctx.Array("i", world_size, lock=False)      # 0 started, 1 in the process group, 2 done
    log_dir = tempfile.mkdtemp(prefix="book-ranks-")
    port = free_port()
    t0 = time.monotonic()
    ranks = [ctx.Process(target=_entry, args=(r, world_size, port, be, timeout_s, fn, args, results, log_dir,
                                              beats, stage), daemon=True) for r in range(world_size)]
    got: dict[int, Any] = {}
    failed = True
    import threading

    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            handlers[sig] = signal.signal(sig, procs.raise_stop)
    try:
        for p in ranks:
            p.start()
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
                        raise RankFailed(r, f"rank {r} of {world_size} died (exit code {ranks[r].exitcode}) "
                                            "without a Python traceback", _log_tail(log_dir, r)) from None
                elif time.monotonic() > deadline:
                    blamed, msg = procs.timeout_message(world_size, timeout_s, got, beats, stage)
                    raise RankFailed(blamed[0], msg, _log_tail(log_dir, blamed[0]), ranks=blamed) from None
                else:
                    continue
            if status == "error":
                raise RankFailed(rank, f"rank {rank} of {world_size} raised:", payload.rstrip())
            got[rank] = payload
        for p in ranks:
            p.join(max(1.0, t0 + timeout_s - time.monotonic()))
        failed = False
    finally:
        procs.stop_all(ranks)
        results.close()
        for sig, h in handlers.items():
            signal.signal(sig, h)
        if not failed:
            shutil.rmtree(log_dir, ignore_errors=True)   # kept (and named in the error) only when a run failed
    return SpawnResult(world_size, be, why, tuple(got[r] for r in range(world_size)), time.monotonic() - t0)


def _log_tail(log_dir: str, rank: int, lines: int = 15) -> str:
    path = Path(log_dir) / f"rank{rank}.log"
    if not path.exists():
        return ""
    tail = path.read_text(errors="replace").splitlines()[-lines:]
    head = f"--- last lines of rank {rank}'s output ({path}; the folder is kept for you to read) ---"
    return head + "\n" + "\n".join(tail) if tail else f"(rank {rank} printed nothing; logs kept in {log_dir})"


# ------------------------------------------------------------------ the real launchers

def env_rank() -> tuple[int, int, int] | None:
    """(rank, world_size, local_rank) from torchrun's or Slurm's variables; None if neither is set."""
    e = os.environ
    if "RANK" in e and "WORLD_SIZE" in e:
        return int(e["RANK"]), int(e["WORLD_SIZE"]), int(e.get("LOCAL_RANK", e["RANK"]))
    if "SLURM_PROCID" in e and "SLURM_NTASKS" in e:
        return int(e["SLURM_PROCID"]), int(e["SLURM_NTASKS"]), int(e.get("SLURM_LOCALID", 0))
    return None


def init_from_env(backend: str | None = None, timeout_s: float = 120.0) -> RankContext:
    """Join the process group described by torchrun/srun variables (a lone process becomes rank 0 of 1).

    Under srun set MASTER_ADDR (e.g. the first host of ``scontrol show hostnames``) and MASTER_PORT yourself."""
    rank, world_size, local_rank = env_rank() or (0, 1, 0)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        if world_size > 1:
            raise RuntimeError("MASTER_PORT is not set: under srun export MASTER_ADDR and MASTER_PORT "
                               "(torchrun sets both)")
        os.environ["MASTER_PORT"] = str(free_port())
    import torch

    local_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", os.environ.get("SLURM_NTASKS_PER_NODE", world_size)))
    if backend is None:
        backend, _ = choose_backend(min(local_world, world_size))
        if backend == "nccl" and local_gpus < local_world:
            backend = "gloo"
    return _init(rank, world_size, local_rank, backend, timeout_s)


_ROOT_CAUSE = re.compile(r"rank\s*:\s*(\d+)")


def torchrun(module: str, args: Sequence[str] = (), nproc: int = 2, timeout_s: float = 120.0,
             env: dict[str, str] | None = None) -> TorchrunResult:
    """Run ``python -m torch.distributed.run --standalone --nproc_per_node=nproc -m module *args``.

    On timeout the whole process group is killed and RankFailed raised; on a non-zero exit RankFailed names
    the rank torchrun's error summary gives as the root cause."""
    cmd = (sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", module, *map(str, args))
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, **(env or {})})
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise RankFailed(None, f"timeout after {timeout_s:.0f} s: `{' '.join(cmd)}` killed with all its ranks",
                         err[-2000:]) from None
    finally:
        if proc.poll() is None:                  # interrupted (Ctrl-C, SIGTERM): never leave the ranks behind
            procs.signal_group(proc.pid, signal.SIGKILL)
            proc.wait(5)
    if proc.returncode != 0:
        m = _ROOT_CAUSE.search(err.split("Root Cause", 1)[-1])
        rank = int(m.group(1)) if m else None
        raise RankFailed(rank, f"`{' '.join(cmd)}` failed (exit {proc.returncode}); root cause rank {rank}",
                         err[-3000:])
    return TorchrunResult(cmd, proc.returncode, out, err, time.monotonic() - t0)


# ------------------------------------------------------------------ hello world (smoke test for any setup)

def hello(ctx: RankContext) -> dict[str, Any]:
    """Each rank contributes rank+1; after all_reduce every rank holds n(n+1)/2."""
    import torch
    import torch.distributed as dist

    t = torch.tensor([ctx.rank + 1.0], device=ctx.device)
    dist.all_reduce(t)
    return {"rank": ctx.rank, "world_size": ctx.world_size, "backend": ctx.backend, "device": ctx.device,
            "host": socket.gethostname(), "all_reduce_sum": float(t.item())}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m helpers launch --world-size 2`` (spawn) or ``torchrun --nproc_per_node=2 -m helpers launch``."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m helpers launch", description="distributed hello world")
    from helpers.core import cli

    ap.add_argument("--world-size", type=cli.world_size, default=2, help="ranks to spawn (ignored under torchrun/srun)")
    ap.add_argument("--backend", choices=["nccl", "gloo"], default=None)
    ap.add_argument("--timeout", type=cli.timeout_s, default=60.0, help="seconds before the ranks are stopped")
    a = ap.parse_args(argv)
    if env_rank() is not None:  # started by torchrun or srun: be one rank
        import torch.distributed as dist

        ctx = init_from_env(a.backend, a.timeout)
        sys.stdout.write(json.dumps(hello(ctx)) + "\n")  # one write: lines of ranks never interleave
        sys.stdout.flush()
        dist.destroy_process_group()
        return 0
    from helpers.core.launch import hello as importable_hello  # under `python -m`, this file is __main__

    res = spawn(importable_hello, a.world_size, backend=a.backend, timeout_s=a.timeout)
    print(f"# {res.backend_reason}")
    for r in res.results:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
