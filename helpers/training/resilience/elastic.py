"""How often to checkpoint, checked by simulating failures, and a torchrun job that survives a killed rank (chapter 14).

* ``helpers.formulas.checkpointing.young`` and ``daly`` give the checkpoint interval τ that minimises lost time
  for a checkpoint cost δ and a mean time between failures M (Young 1974; Daly 2006); :func:`cluster_mtbf_s`
  gives a job's M from the GPUs'.
* :func:`simulate` runs a job through random (exponential) failures with a given τ and returns the wall time it took;
  :func:`sweep` tries many τ so the best one can be set beside the formulas.
* :func:`worker` is a real training rank for ``torchrun``: DDP over gloo (NCCL on GPUs), a checkpoint every few
  steps written atomically by rank 0, resumed from on start; on the first attempt one rank kills itself with
  SIGKILL mid-run. :func:`run_job` launches it with ``--max-restarts`` and a timeout and returns what happened.
  :func:`claim_folder` marks a job folder as elastic's (:data:`MARKER`) and refuses one holding a user's files
  (``--resume`` continues from its ``ckpt.pt`` instead).

    python -m torch.distributed.run --standalone --nproc_per_node=2 --max-restarts=1 \\
        -m helpers.training.resilience.elastic --dir /tmp/job --steps 12 --every 4 --kill-rank 1 --kill-at 7
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli, procs
from helpers.formulas import checkpointing


def cluster_mtbf_s(n_gpus: int, gpu_mtbf_h: float) -> float:
    """A job that needs all ``n_gpus`` fails when any one fails: M_job = M_gpu / N (independent failures)."""
    if n_gpus < 1 or gpu_mtbf_h <= 0:
        raise ValueError(f"n_gpus={n_gpus} must be ≥ 1 and gpu_mtbf_h={gpu_mtbf_h} > 0")
    return gpu_mtbf_h * 3600 / n_gpus


@dataclass(frozen=True)
class SimResult:
    interval_s: float
    wall_s: float            # mean wall time to finish the work
    waste_frac: float        # (wall − work) / wall
    failures: float          # mean number of failures per run


def simulate(interval_s: float, delta_s: float, mtbf_s: float, work_s: float, restart_s: float = 0.0,
             runs: int = 200, seed: int = 0) -> SimResult:
    """Monte Carlo: the work is cut in segments of ``interval_s`` each followed by a checkpoint of ``delta_s``; a
    failure (exponential, mean ``mtbf_s``) loses the segment in progress and costs ``restart_s``; a segment is
    done once it runs ``interval_s + delta_s`` without a failure. Vectorised over runs × segments."""
    if interval_s <= 0 or work_s <= 0 or runs < 1:
        raise ValueError(f"interval_s={interval_s}, work_s={work_s} must be > 0 and runs={runs} ≥ 1")
    rng = np.random.default_rng(seed)
    n_seg = math.ceil(work_s / interval_s)
    need = np.full((runs, n_seg), interval_s + delta_s)
    need[:, -1] = work_s - interval_s * (n_seg - 1) + delta_s
    wall, fails = np.zeros((runs, n_seg)), np.zeros((runs, n_seg))
    pending = np.ones((runs, n_seg), dtype=bool)
    while pending.any():
        t_fail = rng.exponential(mtbf_s, size=int(pending.sum()))
        ok = t_fail >= need[pending]
        add = np.where(ok, need[pending], t_fail + restart_s)
        wall[pending] += add
        fails[pending] += ~ok
        idx = np.flatnonzero(pending)
        pending.flat[idx[ok]] = False
    w = wall.sum(axis=1).mean()
    return SimResult(interval_s, float(w), float((w - work_s) / w), float(fails.sum(axis=1).mean()))


def sweep(delta_s: float, mtbf_s: float, work_s: float, restart_s: float = 0.0, points: int = 25,
          runs: int = 200, seed: int = 0) -> list[SimResult]:
    """:func:`simulate` at ``points`` intervals spread geometrically from Young's τ/8 to 8τ (same seed each)."""
    tau = checkpointing.young(delta_s, mtbf_s)
    return [simulate(float(t), delta_s, mtbf_s, work_s, restart_s, runs, seed)
            for t in np.geomspace(tau / 8, tau * 8, points)]


# ------------------------------------------------------------------ the torchrun job

def _train_state(d_model: int = 32):
    import torch

    from helpers.training.models import tiny
    model = tiny.build("gpt", seed=0, d_model=d_model)
    return model, torch.optim.AdamW(model.parameters(), lr=3e-3)


def _join(attempt: int):
    """Join the group through torchrun's store, under a key prefix of this attempt: keys that a killed attempt
    left behind (its ranks' gloo addresses) must never be read by the next one. Gloo on CPU: the job is about the
    restart, not the speed (on GPUs use NCCL, one GPU per rank)."""
    import datetime

    import torch.distributed as dist

    from helpers.core import launch
    rank, world_size, local_rank = launch.env_rank() or (0, 1, 0)
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"     # torchrun's agent hosts the store
    timeout = datetime.timedelta(seconds=60)
    store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size,
                          is_master=rank == 0 and not agent, timeout=timeout)
    dist.init_process_group("gloo", store=dist.PrefixStore(f"book-attempt-{attempt}", store), rank=rank,
                            world_size=world_size, timeout=timeout)
    return launch.RankContext(rank, world_size, local_rank, "gloo", "cpu")


def worker(folder: str, steps: int, every: int, kill_rank: int, kill_at: int, trust: bool = False) -> None:
    """One rank. Resumes from ``folder/ckpt.pt`` if present; kills itself (SIGKILL: no cleanup, like an OOM kill
    or a lost node) at step ``kill_at`` if it is ``kill_rank`` and this is torchrun's first attempt."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    from helpers.core import inputs
    from helpers.training.resilience import ckpt
    from helpers.training.models import tiny

    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    folder = Path(folder)
    # read (weights_only unless --trust-checkpoint) before joining: a refused file fails fast, not in the group
    s = inputs.load_checkpoint(folder / "ckpt.pt", trust=trust) if (folder / "ckpt.pt").exists() else None
    ctx = _join(attempt)
    model, optim = _train_state()
    start = 0
    if s is not None:
        model.load_state_dict(s["model"])
        optim.load_state_dict(s["optim"])
        start = s["step"]
    ddp = DDP(model)
    loss_fn = tiny.loss_fn("gpt")
    if ctx.rank == 0:
        with open(folder / "events.jsonl", "a") as f:
            f.write(json.dumps({"attempt": attempt, "resumed_from_step": start, "pid": os.getpid()}) + "\n")
    for step in range(start, steps):
        if attempt == 0 and ctx.rank == kill_rank and step == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        x, y = tiny.make_batch("gpt", 8, seed=1000 * step + ctx.rank)   # data position = step (and rank)
        loss = loss_fn(ddp(x), y)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()
        if (step + 1) % every == 0 and ctx.rank == 0:
            ckpt.save({"model": model.state_dict(), "optim": optim.state_dict(), "step": step + 1},
                      folder / "ckpt.pt")
        dist.barrier()                 # nobody runs ahead of the last checkpoint
    if ctx.rank == 0:
        torch.save(model.state_dict(), folder / "final.pt")
    dist.destroy_process_group()


@dataclass(frozen=True)
class JobResult:
    killed: bool
    attempts: int
    resumed_from_step: int        # the step the last attempt started from
    elapsed_s: float
    folder: str


def run_job(folder: str, steps: int = 12, every: int = 4, kill_at: int | None = 7, nproc: int = 2,
            max_restarts: int = 1, timeout_s: float = 120.0) -> JobResult:
    """``python -m torch.distributed.run --max-restarts`` of :func:`worker`; ``kill_at=None`` runs uninterrupted.
    The whole process group is killed if it outlives ``timeout_s``; a non-zero exit raises with torchrun's tail."""
    if kill_at is not None and not 0 <= kill_at < steps:
        raise ValueError(f"kill_at={kill_at} must be in 0..steps-1={steps - 1} (or None for no kill)")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           f"--max-restarts={max_restarts}", "--monitor-interval=0.2", "-m", "helpers.training.resilience.elastic",
           "--dir", folder, "--steps", str(steps), "--every", str(every),
           "--kill-rank", str(nproc - 1), "--kill-at", str(-1 if kill_at is None else kill_at)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})
    try:
        out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        procs.signal_group(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"torchrun job timed out after {timeout_s:.0f} s and was killed with all its ranks") from None
    finally:
        if proc.poll() is None:
            procs.signal_group(proc.pid, signal.SIGKILL)
            proc.wait(5)
    if proc.returncode != 0:
        raise RuntimeError(f"torchrun job failed (exit {proc.returncode}): {err[-6000:]}")
    events = [json.loads(line) for line in open(Path(folder) / "events.jsonl")]
    return JobResult(kill_at is not None, len(events), events[-1]["resumed_from_step"],
                     time.monotonic() - t0, folder)


def same_weights(folder_a: str, folder_b: str) -> tuple[bool, float]:
    """(bit-identical?, max |difference|) of the two jobs' ``final.pt``."""
    import torch

    from helpers.core import inputs

    a = inputs.load_checkpoint(Path(folder_a) / "final.pt")
    b = inputs.load_checkpoint(Path(folder_b) / "final.pt")
    diff = max((a[k] - b[k]).abs().max().item() for k in a)
    return all(torch.equal(a[k], b[k]) for k in a), diff


def killed_vs_uninterrupted(steps: int = 12, every: int = 4, kill_at: int = 7) -> dict:
    """Both jobs in temporary folders: the killed-and-restarted one and the uninterrupted one."""
    with tempfile.TemporaryDirectory(prefix="book-elastic-") as d:
        a, b = Path(d, "killed"), Path(d, "straight")
        a.mkdir()
        b.mkdir()
        ja = run_job(str(a), steps, every, kill_at)
        jb = run_job(str(b), steps, every, None, max_restarts=0)
        same, diff = same_weights(str(a), str(b))
    return {"killed": ja, "straight": jb, "bit_identical": same, "max_abs_diff": diff}


MARKER = ".book-elastic-job"      # written first into a job folder: tells elastic's own folders from a user's


def claim_folder(folder: str, resume: bool = False, rank: int = 0) -> str | None:
    """Make ``folder`` this job's, or refuse it: a folder that holds files elastic did not write (no :data:`MARKER`)
    is refused in one line naming a file and the fix, unless ``resume`` (then it must hold a ``ckpt.pt``, which the
    job resumes from; the returned note says so). An empty folder, or one of elastic's own (a restart), is taken."""
    d = Path(folder)
    if (d / MARKER).exists():
        return None                    # elastic's own folder: a restarted attempt resumes from its ckpt.pt
    others = sorted(x.name for x in d.iterdir() if x.name != MARKER)
    if others and not resume:
        more = f" (and {len(others) - 1} more)" if len(others) > 1 else ""
        raise ValueError(f"--dir {folder} holds {others[0]}{more}, which elastic did not write and would overwrite "
                         "(final.pt, ckpt.pt, events.jsonl): give an empty or new folder, or --resume to continue "
                         "from its ckpt.pt")
    note = None
    if resume:
        if not (d / "ckpt.pt").exists():
            raise ValueError(f"--resume: {folder} holds no ckpt.pt to resume from; drop --resume to start a new "
                             "job in an empty or new folder")
        note = f"elastic: resuming from {d / 'ckpt.pt'} (--resume); its final.pt is rewritten"
    if rank == 0:
        try:
            with open(d / MARKER, "x") as f:
                f.write("written by python -m helpers elastic: this folder is a job folder of its own\n")
        except FileExistsError:
            pass
    return note


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    from helpers.core import cli
    ap.add_argument("--dir", type=cli.existing_dir, required=True, help="job folder (checkpoint, events, final weights)")
    ap.add_argument("--steps", type=cli.positive_int, default=12)
    ap.add_argument("--every", type=cli.positive_int, default=4, help="checkpoint every N steps")
    ap.add_argument("--kill-rank", type=cli.bounded_int(0, 1024), default=1)
    ap.add_argument("--kill-at", type=cli.bounded_int(-1, 10**6), default=-1, help="step at which kill-rank dies on attempt 0 (-1: never)")
    ap.add_argument("--trust-checkpoint", action="store_true",
                    help="load DIR/ckpt.pt with full pickle (only a file you made: pickle can run code); "
                         "default: torch.load(weights_only=True)")
    ap.add_argument("--resume", action="store_true",
                    help="DIR holds a ckpt.pt that elastic did not write: resume from it (final.pt is rewritten)")
    a = ap.parse_args(argv)
    from helpers.core import launch
    env = launch.env_rank()
    note = claim_folder(a.dir, a.resume, env[0] if env else 0)
    if note:
        print(note, file=sys.stderr)
    if env is None:                    # not under torchrun: a one-rank job on this machine
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(launch.free_port()))
    worker(a.dir, a.steps, a.every, a.kill_rank, a.kill_at, a.trust_checkpoint)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
