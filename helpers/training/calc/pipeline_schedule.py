"""Pipeline parallelism: a schedule simulator (GPipe, 1F1B, interleaved 1F1B) and a real pipeline over ranks
with send/recv (chapter 07).

A model cut into p stages processes a batch as m micro-batches. Each stage does F (forward) and B (backward)
for every micro-batch, in an order fixed by the schedule:

* ``gpipe``  all m forwards, then all m backwards (Huang et al., arXiv 1811.06965): m micro-batches of
  activations in flight;
* ``1f1b``   PipeDream-Flush (Narayanan et al., arXiv 2104.04473 §2.2.1): p − r − 1 warm-up forwards on
  stage r, then one-forward-one-backward: at most p micro-batches in flight, same bubble;
* ``interleaved`` each device holds v model chunks (Megatron's interleaved 1F1B, §2.2.2): the bubble
  shrinks by v, at the cost of v times more point-to-point messages.

The bubble — time a device idles — is (p − 1)/m of the ideal compute time for GPipe and 1F1B, and
(p − 1)/(v·m) interleaved. :func:`simulate` runs the schedule as a discrete-event simulation (no formula
inside) so the notebook can check it against those formulas. The CLI lives in :mod:`helpers.training.parallel.pipeline`
(it runs both the simulator and the real pipeline):

    python -m helpers pipeline simulate --p 4 --m 8 --schedule 1f1b --json
    python -m helpers pipeline real --world-size 2 --schedule 1f1b --json      # spawns 2 ranks
    torchrun --nproc_per_node=4 -m helpers pipeline real --schedule 1f1b
"""
from __future__ import annotations

from dataclasses import dataclass

from helpers.training.calc import perfmodel


SCHEDULES = ("gpipe", "1f1b", "interleaved")


@dataclass(frozen=True)
class Op:
    kind: str           # "F" or "B"
    mb: int             # micro-batch
    chunk: int = 0      # model chunk on this device (interleaved: 0..v-1)


def schedule(p: int, m: int, kind: str = "1f1b", v: int = 1) -> list[list[Op]]:
    """The order of operations on each of the ``p`` devices."""
    if kind not in SCHEDULES:
        raise ValueError(f"schedule {kind!r}: use one of {SCHEDULES}")
    if p < 1 or m < 1:
        raise ValueError(f"p={p}, m={m}: need at least one stage and one micro-batch")
    if kind != "interleaved" and v != 1:
        raise ValueError(f"v={v}: model chunks per device only apply to the 'interleaved' schedule")
    if kind == "gpipe":
        return [[Op("F", i) for i in range(m)] + [Op("B", i) for i in range(m)] for _ in range(p)]
    if kind == "1f1b":
        out = []
        for r in range(p):
            warm = min(p - r - 1, m)
            ops = [Op("F", i) for i in range(warm)]
            for i in range(m - warm):
                ops += [Op("F", warm + i), Op("B", i)]
            out.append(ops + [Op("B", i) for i in range(m - warm, m)])
        return out
    if m % p:
        raise ValueError(f"interleaved needs m divisible by p (m={m}, p={p}): try m={p * max(1, m // p)}")
    total = m * v

    def op(k: int, kind_: str) -> Op:           # k-th forward (or backward) on a device, as in Megatron
        c = (k // p) % v
        return Op(kind_, (k // (p * v)) * p + k % p, c if kind_ == "F" else v - 1 - c)

    out = []
    for r in range(p):
        warm = total if m == p else min((p - r - 1) * 2 + (v - 1) * p, total)
        ops = [op(k, "F") for k in range(warm)]
        for i in range(total - warm):
            ops += [op(warm + i, "F"), op(i, "B")]
        out.append(ops + [op(i, "B") for i in range(total - warm, total)])
    return out


@dataclass(frozen=True)
class Event:
    device: int
    kind: str
    mb: int
    chunk: int
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Simulation:
    schedule: str
    p: int
    m: int
    v: int
    makespan_s: float
    ideal_s: float                  # m (t_fwd + t_bwd): one device's work with no waiting
    bubble_fraction: float          # (makespan − ideal) / ideal
    formula_bubble: float           # (p − 1)/m, or (p − 1)/(v m) interleaved
    max_in_flight: float            # most micro-batches' activations held by one device (in stage units)
    events: tuple[Event, ...]


def simulate(p: int, m: int, kind: str = "1f1b", v: int = 1, t_fwd_s: float = 1.0, t_bwd_s: float = 2.0,
             t_comm_s: float = 0.0) -> Simulation:
    """Run the schedule: each op starts when its device is free and its inputs have arrived.

    A stage's forward takes ``t_fwd_s`` per micro-batch (a chunk of it t_fwd_s / v), backward ``t_bwd_s``;
    sending to the next device adds ``t_comm_s``. Raises if the schedule deadlocks."""
    if min(t_fwd_s, t_bwd_s) <= 0 or t_comm_s < 0:
        raise ValueError(f"times must be positive (t_fwd_s={t_fwd_s}, t_bwd_s={t_bwd_s}, t_comm_s={t_comm_s})")
    order = schedule(p, m, kind, v)
    n_virtual = p * v                           # virtual stage of (device r, chunk c) is c·p + r
    done: dict[tuple[str, int, int], tuple[int, float]] = {}   # (kind, mb, virtual stage) -> (device, end)
    free, pos, events = [0.0] * p, [0] * p, []
    while any(pos[r] < len(order[r]) for r in range(p)):
        progressed = False
        for r in range(p):
            if pos[r] == len(order[r]):
                continue
            o = order[r][pos[r]]
            vs = o.chunk * p + r
            if o.kind == "F":
                dep = ("F", o.mb, vs - 1) if vs > 0 else None
            else:
                dep = ("B", o.mb, vs + 1) if vs < n_virtual - 1 else ("F", o.mb, vs)
            if dep is not None and dep not in done:
                continue
            ready = 0.0
            if dep is not None:
                dev, end = done[dep]
                ready = end + (t_comm_s if dev != r else 0.0)
            start = max(free[r], ready)
            end = start + (t_fwd_s if o.kind == "F" else t_bwd_s) / v
            done[(o.kind, o.mb, vs)] = (r, end)
            events.append(Event(r, o.kind, o.mb, o.chunk, start, end))
            free[r], pos[r], progressed = end, pos[r] + 1, True
        if not progressed:
            raise RuntimeError(f"schedule {kind} deadlocked at positions {pos} (p={p}, m={m}, v={v})")
    makespan = max(e.end_s for e in events)
    ideal = m * (t_fwd_s + t_bwd_s)
    in_flight = 0
    for r in range(p):
        held = peak = 0
        for e in sorted((e for e in events if e.device == r), key=lambda e: e.start_s):
            held += 1 if e.kind == "F" else -1
            peak = max(peak, held)
        in_flight = max(in_flight, peak)
    formula = perfmodel.pipeline_bubble(p, m, v)
    return Simulation(kind, p, m, v, makespan, ideal, (makespan - ideal) / ideal, formula, in_flight / v,
                      tuple(events))


def records(sims) -> list[dict]:
    return [{"schedule": s.schedule, "p": s.p, "m": s.m, "v": s.v, "makespan": s.makespan_s, "ideal": s.ideal_s,
             "bubble_fraction": s.bubble_fraction, "formula_bubble": s.formula_bubble,
             "max_in_flight": s.max_in_flight} for s in sims]
