"""Checkpoints that resume bit-identically, sharded and resharded, and written asynchronously (chapter 14).

Three things a restart must get back, or the resumed run drifts from the one that never stopped:

* the **model and optimiser** state (Adam's moments and step count, not only the weights);
* the **RNG** states (dropout masks and any sampling draw from them);
* the **data position** (which epoch, which sample next: a loader that restarts at sample 0 repeats data).

:func:`resume_check` runs a tiny GPT (dropout on, Adam) straight through and again with a save, a fresh process-like
rebuild and a load in the middle, and compares every weight bit for bit — once with everything restored and once
with each piece left out. :func:`dcp_save` / :func:`dcp_load` are rank workers (``helpers.core.launch.run``) that
shard a model with FSDP2, save it with ``torch.distributed.checkpoint`` on N ranks and load it on M ranks.
:func:`stall_bench` measures how long training is blocked by a synchronous ``torch.distributed.checkpoint.save``
versus ``torch.distributed.checkpoint.async_save`` (stage to CPU memory in the loop, write from a background thread);
:func:`stall_worker` runs it on a 1-rank gloo group.
"""
from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from helpers.training.models import tiny

PIECES = ("model", "optim", "rng", "data")


class Loader:
    """A shuffling batch loader whose position is state: (epoch, next batch index); each epoch's order comes
    from ``seed + epoch``, so the state is two integers and a restart continues with the very next batch."""

    def __init__(self, n_samples: int, batch_size: int, seed: int = 0):
        if not 0 < batch_size <= n_samples:
            raise ValueError(f"batch_size={batch_size} must be in 1..n_samples={n_samples}")
        self.n, self.bs, self.seed = n_samples, batch_size, seed
        self.epoch, self.pos = 0, 0

    def next_indices(self) -> torch.Tensor:
        per_epoch = self.n // self.bs
        if self.pos >= per_epoch:
            self.epoch, self.pos = self.epoch + 1, 0
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + self.epoch))
        idx = order[self.pos * self.bs:(self.pos + 1) * self.bs]
        self.pos += 1
        return idx

    def state_dict(self) -> dict:
        return {"seed": self.seed, "epoch": self.epoch, "pos": self.pos}

    def load_state_dict(self, s: dict) -> None:
        self.seed, self.epoch, self.pos = int(s["seed"]), int(s["epoch"]), int(s["pos"])


@dataclass
class Run:
    model: torch.nn.Module
    optim: torch.optim.Optimizer
    loader: Loader
    data: tuple[torch.Tensor, torch.Tensor]
    step: int = 0


def new_run(seed: int = 0, n_samples: int = 64, batch_size: int = 8) -> Run:
    """A tiny GPT with dropout 0.1 (so the RNG matters), AdamW (so the optimiser state matters) and a loader."""
    model = tiny.build("gpt", seed=seed, dropout=0.1)
    return Run(model, torch.optim.AdamW(model.parameters(), lr=3e-3), Loader(n_samples, batch_size, seed),
               tiny.make_batch("gpt", n_samples, seed=1))


def train(run: Run, n_steps: int) -> list[float]:
    loss_fn, losses = tiny.loss_fn("gpt"), []
    run.model.train()
    for _ in range(n_steps):
        idx = run.loader.next_indices()
        x, y = run.data[0][idx], run.data[1][idx]
        loss = loss_fn(run.model(x), y)
        run.optim.zero_grad(set_to_none=True)
        loss.backward()
        run.optim.step()
        run.step += 1
        losses.append(loss.item())
    return losses


def state_of(run: Run) -> dict:
    """Everything a bit-identical resume needs, as one picklable dict."""
    return {"model": run.model.state_dict(), "optim": run.optim.state_dict(), "rng": torch.get_rng_state(),
            "data": run.loader.state_dict(), "step": run.step}


def save(state: dict, path: str | os.PathLike, fsync: bool = True) -> int:
    """Atomic save: write a temporary file beside ``path``, fsync, rename. Returns the bytes written."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            if fsync:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path.stat().st_size


def restore(run: Run, path: str | os.PathLike, pieces=PIECES, trust: bool = False) -> None:
    """Load the ``pieces`` (a subset of PIECES) saved at ``path`` into ``run``: ``torch.load(weights_only=True)``
    (no code in the file can run) unless ``trust`` (``helpers.core.inputs.load_checkpoint``)."""
    from helpers.core import inputs

    bad = set(pieces) - set(PIECES)
    if bad:
        raise ValueError(f"pieces {sorted(bad)}: choose from {PIECES}")
    s = inputs.load_checkpoint(path, trust=trust)
    if "model" in pieces:
        run.model.load_state_dict(s["model"])
    if "optim" in pieces:
        run.optim.load_state_dict(s["optim"])
    if "rng" in pieces:
        torch.set_rng_state(s["rng"])
    if "data" in pieces:
        run.loader.load_state_dict(s["data"])
    run.step = s["step"]


@dataclass(frozen=True)
class ResumeCheck:
    restored: str
    bit_identical: bool
    max_abs_diff: float
    final_loss: float
    reference_loss: float


def _max_diff(a: torch.nn.Module, b: torch.nn.Module) -> float:
    return max((pa - pb).abs().max().item() for pa, pb in zip(a.parameters(), b.parameters()))


def resume_check(total_steps: int = 12, stop_at: int = 5, leave_out: tuple[str, ...] = ()) -> ResumeCheck:
    """Train ``total_steps`` straight; then train ``stop_at``, save, rebuild from another seed (a new process
    would start from other weights and another RNG), restore all PIECES except ``leave_out``, train the rest."""
    if not 0 < stop_at < total_steps:
        raise ValueError(f"stop_at={stop_at} must be in 1..total_steps-1={total_steps - 1}")
    torch.manual_seed(0)
    ref = new_run()
    ref_losses = train(ref, total_steps)
    torch.manual_seed(0)
    first = new_run()
    train(first, stop_at)
    with tempfile.TemporaryDirectory(prefix="book-ckpt-") as d:
        save(state_of(first), Path(d) / "ckpt.pt", fsync=False)
        torch.manual_seed(1234)                      # the new process's RNG is not the old one
        second = new_run(seed=99)
        restore(second, Path(d) / "ckpt.pt", [p for p in PIECES if p not in leave_out])
    losses = train(second, total_steps - stop_at)
    same = all(torch.equal(a, b) for a, b in zip(ref.model.parameters(), second.model.parameters()))
    label = "everything" if not leave_out else "all but " + "+".join(leave_out)
    return ResumeCheck(label, same, _max_diff(ref.model, second.model), losses[-1], ref_losses[-1])


# ------------------------------------------------------------------ sharded: torch.distributed.checkpoint

def _fsdp_run(ctx, seed: int):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    model = tiny.build("gpt", seed=seed, d_model=64, n_heads=4)
    mesh = init_device_mesh("cpu", (ctx.world_size,))
    for blk in model.blocks:
        fully_shard(blk, mesh=mesh)
    fully_shard(model, mesh=mesh)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def _full_state(model, optim) -> dict:
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict

    msd, _ = get_state_dict(model, optim, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    return {k: v.detach().numpy().copy() for k, v in msd.items()}   # numpy: safe to send between processes


def dcp_save(ctx, path: str, steps: int = 2) -> dict:
    """Rank worker: FSDP2-shard a GPT over ``world_size`` ranks, train ``steps`` (AdamW), save model+optimiser
    with ``torch.distributed.checkpoint`` into ``path``. Returns this rank's shard sizes and, on rank 0, the full
    (unsharded) weights to compare with after loading on another world size."""
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    model, optim = _fsdp_run(ctx, seed=0)
    x, y = tiny.make_batch("gpt", 8, seed=2 + ctx.rank)
    for _ in range(steps):
        loss = tiny.loss_fn("gpt")(model(x), y)
        optim.zero_grad()
        loss.backward()
        optim.step()
    msd, osd = get_state_dict(model, optim)
    local = sum(v.to_local().numel() for v in msd.values() if hasattr(v, "to_local"))
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=path)
    full = _full_state(model, optim)
    dist.barrier()
    return {"rank": ctx.rank, "local_params": local, "full": full if ctx.rank == 0 else None}


def dcp_load(ctx, path: str) -> dict:
    """Rank worker: build the same model from *another* seed on this world size, load the checkpoint with
    ``torch.distributed.checkpoint`` (it reshards: each rank reads the pieces of the saved shards it now owns)."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    model, optim = _fsdp_run(ctx, seed=7)
    msd, osd = get_state_dict(model, optim)
    sd = {"model": msd, "optim": osd}
    dcp.load(sd, checkpoint_id=path)
    set_state_dict(model, optim, model_state_dict=sd["model"], optim_state_dict=sd["optim"])
    local = sum(v.to_local().numel() for v in msd.values() if hasattr(v, "to_local"))
    full = _full_state(model, optim)
    return {"rank": ctx.rank, "local_params": local, "full": full if ctx.rank == 0 else None}


# ------------------------------------------------------------------ sync vs async: the stall

@dataclass(frozen=True)
class StallResult:
    mode: str
    checkpoints: int
    checkpoint_bytes: int            # bytes of one DCP checkpoint folder (shard files + .metadata)
    stall_per_ckpt_s: float          # time the training loop was blocked per checkpoint
    total_s: float                   # wall time of the whole run, checkpoints included


def _folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file())


def stall_bench(mode: str, steps: int = 20, every: int = 5, width: int = 1024, folder: str | None = None) -> StallResult:
    """Train an MLP (``width``² weights per layer, Adam) for ``steps``; checkpoint every ``every`` steps with
    ``torch.distributed.checkpoint`` into a new folder per checkpoint, and time how long the loop is blocked.

    sync: ``dcp.save`` (plan, write, fsync, ``.metadata``) inside the loop. async: ``dcp.async_save``, which stages
    the state dict into CPU memory and returns a future while a background thread writes it; before the next
    checkpoint the loop waits for that future (at most one write in flight), so a write slower than the interval
    comes back as stall. none: no checkpoint. Runs in a process group (a 1-rank gloo group: :func:`stall_worker`)
    or, without one, as a single process."""
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp

    if mode not in ("none", "sync", "async"):
        raise ValueError(f"mode={mode!r}: use 'none', 'sync' or 'async'")
    torch.manual_seed(0)
    model = tiny.TinyMLP(tiny.MLPConfig(d_in=width, d_hidden=width, d_out=width, n_layers=4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(32, width)
    no_dist = not (dist.is_available() and dist.is_initialized())
    stalls, last, pending = [], None, None
    with tempfile.TemporaryDirectory(prefix="book-stall-", dir=folder) as d:
        t0 = time.perf_counter()
        for step in range(1, steps + 1):
            loss = model(x).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if mode == "none" or step % every:
                continue
            s0 = time.perf_counter()
            state, last = {"model": model.state_dict(), "optim": opt.state_dict()}, Path(d) / f"step{step}"
            if mode == "sync":
                dcp.save(state, checkpoint_id=last, no_dist=no_dist)
            else:
                if pending is not None:
                    pending.result()                      # the previous write must finish first
                pending = dcp.async_save(state, checkpoint_id=last, no_dist=no_dist)
            stalls.append(time.perf_counter() - s0)
        if pending is not None:
            pending.result()
        total = time.perf_counter() - t0
        nbytes = _folder_bytes(last) if last is not None else 0
    n = len(stalls)
    return StallResult(mode, n, nbytes, sum(stalls) / n if n else 0.0, total)


def stall_worker(ctx, modes=("none", "sync", "async"), steps: int = 12, every: int = 4, width: int = 1024,
                 folder: str | None = None) -> list[StallResult]:
    """Rank worker (``launch.run(ckpt.stall_worker, 1)``): :func:`stall_bench` for each mode inside the rank's
    gloo group, as a training job calls DCP — ``async_save`` needs a CPU (gloo) backend in the group."""
    torch.set_num_threads(1)
    return [stall_bench(m, steps, every, width, folder) for m in modes]
