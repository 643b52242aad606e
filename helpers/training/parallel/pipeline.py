"""Pipeline parallelism for real: the TinyMLP cut into one stage per rank, micro-batches passed with send/recv
(chapter 07); also the CLI of the schedule simulator in :mod:`helpers.training.calc.pipeline_schedule`.

Each rank executes *the same operation list* that ``helpers.training.calc.pipeline_schedule.schedule`` gives the simulator
(GPipe or 1F1B): for F it receives the activations from the previous rank (``dist.recv``), runs its stage
and sends the output on (``dist.isend``); for B it receives dL/d(output) from the next rank, back-propagates
through its stage and sends dL/d(input) back. The last stage computes the loss. Every rank also trains the
unsplit model on the whole batch and compares: loss per step, and its stage's parameters at the end.

Sends are non-blocking (``isend``) and awaited at the end of the step, so a rank never waits for its
neighbour to post a receive; receives block, which is where the pipeline's bubbles appear.

    python -m helpers pipeline real --world-size 2 --schedule 1f1b --json
    torchrun --nproc_per_node=2 -m helpers pipeline real
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

from helpers.core import cli, launch, results
from helpers.training.models import tiny
from helpers.training.calc import pipeline_schedule


@dataclass(frozen=True)
class PipelineRun:
    rank: int
    world_size: int
    backend: str
    schedule: str
    n_micro: int
    losses: tuple[float, ...]           # pipeline loss per step (from the last stage, broadcast)
    ref_losses: tuple[float, ...]       # unsplit model, whole batch, same steps
    max_loss_diff: float
    max_param_diff: float               # this stage's parameters vs the same layers of the unsplit model
    messages_sent: int                  # point-to-point sends per step from this rank
    bytes_sent: int                     # per step
    events: tuple                       # (kind, mb, start_s, end_s) of the last step, for a timeline


def run_stage(ctx: launch.RankContext, kind: str = "1f1b", n_micro: int = 4, steps: int = 3,
              global_batch: int = 16, lr: float = 0.1, seed: int = 0) -> PipelineRun:
    """The rank worker: be stage ``ctx.rank`` of a ``ctx.world_size``-stage pipeline."""
    import torch
    import torch.distributed as dist

    p, r, dev = ctx.world_size, ctx.rank, ctx.device
    if global_batch % n_micro:
        raise ValueError(f"global_batch={global_batch} does not split into n_micro={n_micro} micro-batches")
    cfg = tiny.config("mlp")
    stage = tiny.stages(tiny.build("mlp", seed), p)[r].to(dev)
    ref = tiny.build("mlp", seed).to(dev)
    opt, ref_opt = torch.optim.SGD(stage.parameters(), lr), torch.optim.SGD(ref.parameters(), lr)
    loss_of = tiny.loss_fn("mlp")
    x, y = (t.to(dev) for t in tiny.make_batch("mlp", global_batch, seed + 1))
    xs, ys = x.chunk(n_micro), y.chunk(n_micro)
    mb_shape = (global_batch // n_micro, cfg.d_hidden)          # every stage boundary has width d_hidden
    ops = pipeline_schedule.schedule(p, n_micro, kind)[r]
    losses, ref_losses, events = [], [], []
    n_sent = n_bytes = 0
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        inputs, outputs, mb_loss, sends, events = {}, {}, {}, [], []
        n_sent = n_bytes = 0
        dist.barrier()
        t0 = time.perf_counter()
        for o in ops:
            t_start = time.perf_counter() - t0
            if o.kind == "F":
                if r == 0:
                    inp = xs[o.mb]
                else:
                    inp = torch.empty(mb_shape, device=dev)
                    dist.recv(inp, r - 1, tag=o.mb)
                    inp.requires_grad_()
                out = stage(inp)
                inputs[o.mb], outputs[o.mb] = inp, out
                if r == p - 1:
                    mb_loss[o.mb] = loss_of(out, ys[o.mb]) / n_micro   # mean of micro-batch means
                else:
                    buf = out.detach()
                    sends.append((dist.isend(buf, r + 1, tag=o.mb), buf))
                    n_sent, n_bytes = n_sent + 1, n_bytes + buf.numel() * buf.element_size()
            else:
                if r == p - 1:
                    mb_loss[o.mb].backward()
                else:
                    grad = torch.empty_like(outputs[o.mb])
                    dist.recv(grad, r + 1, tag=o.mb)
                    outputs[o.mb].backward(grad)
                if r > 0:
                    buf = inputs[o.mb].grad
                    sends.append((dist.isend(buf, r - 1, tag=o.mb), buf))
                    n_sent, n_bytes = n_sent + 1, n_bytes + buf.numel() * buf.element_size()
                del inputs[o.mb], outputs[o.mb]               # this micro-batch's activations are freed
            events.append((o.kind, o.mb, t_start, time.perf_counter() - t0))
        for work, _ in sends:
            work.wait()
        opt.step()
        loss = torch.stack(list(mb_loss.values())).sum().detach() if r == p - 1 else torch.zeros((), device=dev)
        dist.broadcast(loss, p - 1)
        losses.append(float(loss))
        ref_opt.zero_grad(set_to_none=True)
        ref_loss = loss_of(ref(x), y)
        ref_loss.backward()
        ref_opt.step()
        ref_losses.append(float(ref_loss))
    ref_stage = tiny.stages(ref, p)[r]
    pdiff = max(float((a - b).abs().max()) for a, b in zip(stage.parameters(), ref_stage.parameters()))
    ldiff = max(abs(a - b) for a, b in zip(losses, ref_losses))
    return PipelineRun(r, p, ctx.backend, kind, n_micro, tuple(losses), tuple(ref_losses), ldiff, pdiff,
                       n_sent, n_bytes, tuple(events))


def run_stages(ctx: launch.RankContext, kinds: tuple[str, ...], n_micro: int, steps: int,
               global_batch: int) -> list[PipelineRun]:
    """Every schedule in turn in one process group (one spawn for all of them)."""
    import torch

    if ctx.device == "cpu":
        torch.set_num_threads(1)   # tiny tensors: extra OpenMP threads only spin against the other ranks
    return [run_stage(ctx, k, n_micro, steps, global_batch) for k in kinds]


def run(world_size: int = 2, kinds=("gpipe", "1f1b"), n_micro: int = 4, steps: int = 3, global_batch: int = 16,
        timeout_s: float = 120) -> list[PipelineRun]:
    """``world_size`` ranks (``launch.run``: spawned, or torchrun's), one pipeline stage each; a record per
    (schedule, rank)."""
    n_layers = tiny.config("mlp").n_layers
    world_size = launch.world_size(world_size)
    if not 1 <= world_size <= n_layers:
        raise ValueError(f"world_size={world_size}: the {n_layers}-layer TinyMLP has 1..{n_layers} stages")
    bad = [k for k in kinds if k not in ("gpipe", "1f1b")]
    if bad:
        raise ValueError(f"schedules {bad}: the real pipeline runs 'gpipe' and '1f1b' (one chunk per rank)")
    res = launch.run(run_stages, world_size, tuple(kinds), n_micro, steps, global_batch, timeout_s=timeout_s)
    runs = [x for per_rank in res.results for x in per_rank]
    return sorted(runs, key=lambda x: (kinds.index(x.schedule), x.rank))


def events_of(runs: list[PipelineRun]):
    """The last step's operations of every rank as ``pipeline_schedule.Event``s (for
    ``helpers.figures.training.timeline_figure``)."""
    Event = pipeline_schedule.Event

    return [Event(r.rank, k, mb, 0, s, e) for r in runs for k, mb, s, e in r.events]


BYTES_PER_EVENT = 512       # an Event, its Op and list slots: ~460 B measured with tracemalloc (CPython 3.11)
MAX_EVENTS = 10**7          # ~30 µs of pure Python each: beyond this a simulation runs for minutes


def check_simulation(p: int, m: int, kinds, v: int) -> None:
    """Refuse a simulation too big to hold or to finish, before any runs: 2·p·m events (F and B), times v chunks
    for the interleaved schedule."""
    from helpers.core import resources

    events = sum(2 * p * m * (v if k == "interleaved" else 1) for k in kinds)
    if events > MAX_EVENTS:
        raise resources.NotEnough(f"--p {p} --m {m} --v {v} for {','.join(kinds)} is {events:.3g} events, over the "
                                  f"limit of {MAX_EVENTS:.0e} (about 30 µs each): lower --p, --m or --v")
    resources.require_memory(events * BYTES_PER_EVENT, what=f"a simulation of {events} events", flag="--p/--m/--v")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers pipeline", description=pipeline_schedule.__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("simulate", help="simulate a schedule; bubble vs formula")
    s.add_argument("--p", type=cli.bounded_int(1, 1024), default=4)
    s.add_argument("--m", type=cli.bounded_int(1, 100_000), default=8)
    s.add_argument("--v", type=cli.bounded_int(1, 64), default=2, help="chunks per device for the interleaved schedule")
    s.add_argument("--schedule", default="gpipe,1f1b,interleaved")
    results.add_output_args(s)
    r = sub.add_parser("real", help="a real pipeline over ranks with send/recv, checked against one process")
    launch.add_args(r, 2, backend=False)                              # one stage per rank
    r.add_argument("--schedule", default="gpipe,1f1b", help="comma-separated: gpipe, 1f1b")
    r.add_argument("--n-micro", type=cli.bounded_int(1, 1024), default=4)
    r.add_argument("--steps", type=cli.bounded_int(1, 10_000), default=3)
    results.add_output_args(r)
    a = ap.parse_args(argv)
    if a.cmd == "simulate":
        check_simulation(a.p, a.m, a.schedule.split(","), a.v)
        sims = [pipeline_schedule.simulate(a.p, a.m, k, a.v if k == "interleaved" else 1) for k in a.schedule.split(",")]
        results.emit(pipeline_schedule.records(sims), "pipeline-simulation", a)
        return 0
    runs = run(a.world_size, tuple(a.schedule.split(",")), a.n_micro, a.steps, timeout_s=a.timeout)
    recs = [{k: v for k, v in results.to_dict(x).items() if k != "events"} for x in runs]
    launch.emit(recs, "pipeline-real", a, columns=["schedule", "rank", "world_size", "backend", "n_micro",
                                                  "max_loss_diff", "max_param_diff", "messages_sent"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
