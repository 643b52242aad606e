"""Ranks started by the real launchers, torchrun and Slurm's srun: the environment side of ``helpers.core.launch``
(chapters 03, 06-08).

* :func:`env_rank` reads the variables torchrun (RANK/WORLD_SIZE/LOCAL_RANK) or srun
  (SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID) set; :func:`init_from_env` joins the process group they describe;
* :func:`as_rank` is ``launch.run`` under such a launcher: this process is one rank — it joins, runs the worker,
  gathers every rank's result to all ranks (``all_gather_object``) and leaves the group;
* :func:`torchrun` starts ``python -m torch.distributed.run --standalone`` from Python, with a timeout, and names
  the rank torchrun reports as the root cause of a failure.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from helpers.core import procs, rankerrors
from helpers.core.rankspawn import RankContext, RankFailed, SpawnResult, choose_backend, free_port, join_group

_joined = False          # launch.run joins the launcher's group once per process (see as_rank)


@dataclass(frozen=True)
class TorchrunResult:
    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    elapsed_s: float


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
    return join_group(rank, world_size, local_rank, backend, timeout_s)


def as_rank(fn: Callable[..., Any], args: Sequence[Any], backend: str | None = None,
            timeout_s: float = 120.0) -> SpawnResult:
    """This process is one rank of the launcher's job: join, ``fn(ctx, *args)``, every rank's result gathered to
    all ranks in rank order, leave the group. The world size is the launcher's."""
    global _joined
    import torch.distributed as dist

    if _joined:
        raise RuntimeError("launch.run already ran once in this torchrun/srun process, and a process group is "
                           "joined once per process: do all the work in one worker (loop inside it) or start "
                           "one launcher job per world size")
    launcher = "torchrun" if "RANK" in os.environ else "srun"
    t0 = time.monotonic()
    try:
        ctx = init_from_env(backend, timeout_s)
    except (RuntimeError, OSError) as e:      # DistStoreError, DistNetworkError, gloo's enforce failures
        rank, world = (env_rank() or (0, 1, 0))[:2]
        fix = rankerrors.fix_for(str(e)) or rankerrors.rendezvous_fix()
        raise RankFailed(rank, f"rank {rank} of {world} could not join the process group: "
                               f"{rankerrors.last_error(str(e))}; fix: {fix}", str(e)) from None
    _joined = True
    try:
        out = fn(ctx, *args)
        gathered: list[Any] = [None] * ctx.world_size
        dist.all_gather_object(gathered, out)
    finally:
        dist.destroy_process_group()
    why = f"{ctx.backend}: {ctx.world_size} rank(s) started by {launcher} (its environment sets the world size)"
    return SpawnResult(ctx.world_size, ctx.backend, why, tuple(gathered), time.monotonic() - t0)


_ROOT_CAUSE = re.compile(r"rank\s*:\s*(\d+)")


def torchrun(module: str, args: Sequence[str] = (), nproc: int = 2, timeout_s: float = 120.0,
             env: dict[str, str] | None = None) -> TorchrunResult:
    """Run ``python -m torch.distributed.run --standalone --nproc_per_node=nproc -m module *args``.

    On timeout the whole process group is killed and RankFailed raised; on a non-zero exit RankFailed names
    the rank torchrun's error summary gives as the root cause."""
    cmd = (sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           "-m", module, *map(str, args))
    t0 = time.monotonic()
    quiet = {} if rankerrors.debug() else {"TORCH_CPP_LOG_LEVEL": "ERROR"}     # c10d's C++ lines: --debug only
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**quiet, **os.environ, **(env or {})})
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
        line = _rank_error(err)
        raise RankFailed(rank, f"`{' '.join(cmd)}` failed (exit {proc.returncode}); root cause rank {rank}"
                               + (f": {line}" if line else ""), rankerrors.quiet(err)[-3000:])
    return TorchrunResult(cmd, proc.returncode, out, err, time.monotonic() - t0)


def _rank_error(err: str) -> str:
    """The first error a rank printed in torchrun's stderr (before torchrun's own report): a tool's one-line error
    (``python -m helpers …: failed …``) or a traceback's exception line; '' if none is found."""
    ranks_part = re.split(r"^\S*E\d{4} .*failed \(exitcode", err, maxsplit=1, flags=re.M)[0]
    for ln in rankerrors.quiet(ranks_part).splitlines():
        if re.match(r"^python -m \S+.*: (bad input|failed)", ln):
            return rankerrors.last_error(ln.split("  (add --debug")[0])
    if "Traceback (most recent call last)" in ranks_part:
        return rankerrors.last_error(ranks_part.split("Traceback (most recent call last)")[1])
    return ""
