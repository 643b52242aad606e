"""A batch-scheduler simulator: FIFO, priority (with optional preemption), EASY backfill and fair share on a job
trace, plus what goes wrong without gang scheduling — checked against the real Slurm's order (chapter 13).

Jobs ask for ``size`` nodes (or CPUs, or GPUs: one kind of resource) for an unknown ``runtime_s``; the scheduler only
knows the user's ``limit_s`` (the ``--time`` a job gives), which is why backfill reserves by limits, not runtimes.

* ``fifo`` — start jobs in submit order; the first that does not fit blocks everyone behind it.
* ``priority`` — the same, highest ``priority`` first; ``preempt=True`` lets a job that cannot fit requeue
  lower-priority running jobs (their work so far is lost, counted in ``lost_node_s``).
* ``backfill`` — EASY backfill (Lifka 1995; Slurm's sched/backfill is a generalisation): FIFO, but when the head job
  must wait, compute the *shadow time* at which enough nodes will be free for it (from running jobs' limits), and
  start a later job now if it fits and either ends (by its limit) before the shadow time or uses only the nodes the
  head will not need then. The head is never delayed.
* ``fairshare`` — order by each user's usage so far (node-seconds, running jobs included), least first.

    from helpers.ops import schedsim
    jobs = schedsim.synthetic_trace(60, nodes=16, seed=0)
    res = schedsim.simulate(jobs, nodes=16, policy="backfill")    # → SimResult (per-job starts, utilisation …)
    python -m helpers schedsim --nodes 16 --jobs 60 --policy fifo,backfill
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field, replace

import numpy as np

POLICIES = ("fifo", "priority", "backfill", "fairshare")


@dataclass(frozen=True)
class Job:
    id: int
    submit_s: float
    size: int
    runtime_s: float
    limit_s: float
    priority: int = 0
    user: str = "a"


@dataclass(frozen=True)
class JobResult:
    id: int
    user: str
    size: int
    submit_s: float
    start_s: float
    end_s: float
    wait_s: float
    preemptions: int


@dataclass(frozen=True)
class SimResult:
    policy: str
    nodes: int
    makespan_s: float
    mean_wait_s: float
    max_wait_s: float
    utilisation: float              # node-seconds of useful work / (nodes × makespan)
    lost_node_s: float              # work thrown away by preemption
    jobs: tuple[JobResult, ...] = field(repr=False)


def synthetic_trace(n: int, nodes: int, seed: int = 0, load: float = 1.3) -> list[Job]:
    """``n`` jobs: sizes powers of two up to ``nodes``, lognormal runtimes, limits 1–3× the runtime rounded up to the
    minute (users over-ask), Poisson arrivals at ``load`` × what the cluster can absorb."""
    rng = np.random.default_rng(seed)
    max_pow = int(np.log2(nodes))
    sizes = 2 ** rng.integers(0, max_pow + 1, n)
    runtimes = np.clip(rng.lognormal(np.log(1800), 0.9, n), 60, 6 * 3600)
    limits = np.ceil(runtimes * rng.uniform(1.0, 3.0, n) / 60) * 60
    mean_work = float(np.mean(sizes * runtimes))
    gaps = rng.exponential(mean_work / nodes / load, n)
    submits = np.cumsum(gaps) - gaps[0]
    users = rng.choice(["alice", "bob", "carol"], n, p=[0.6, 0.3, 0.1])
    prios = rng.choice([0, 10], n, p=[0.8, 0.2])
    return [Job(i, float(s), int(z), float(r), float(lim), int(p), str(u))
            for i, (s, z, r, lim, p, u) in enumerate(zip(submits, sizes, runtimes, limits, prios, users))]


def simulate(jobs: list[Job], nodes: int, policy: str = "fifo", preempt: bool = False) -> SimResult:
    """Run the trace to completion under ``policy``; every decision point is an arrival or a completion."""
    if policy not in POLICIES:
        raise ValueError(f"policy {policy!r}: give one of {POLICIES}")
    too_big = [j.id for j in jobs if not 1 <= j.size <= nodes]
    if too_big:
        raise ValueError(f"jobs {too_big[:5]} ask for more than the {nodes} nodes (or < 1): they could never start")
    pending = sorted(jobs, key=lambda j: (j.submit_s, j.id))
    queue: list[Job] = []
    running: dict[int, tuple[Job, float]] = {}           # id → (job, start)
    first_start: dict[int, float] = {}
    done: dict[int, JobResult] = {}
    preempted: dict[int, int] = {}
    usage: dict[str, float] = {}
    lost = 0.0
    free, t, i = nodes, 0.0, 0

    def order(now: float) -> list[Job]:
        if policy == "priority":
            return sorted(queue, key=lambda j: (-j.priority, j.submit_s, j.id))
        if policy == "fairshare":
            live = dict(usage)
            for j, s in running.values():
                live[j.user] = live.get(j.user, 0.0) + j.size * (now - s)
            return sorted(queue, key=lambda j: (live.get(j.user, 0.0), j.submit_s, j.id))
        return sorted(queue, key=lambda j: (j.submit_s, j.id))

    def start(j: Job, now: float) -> None:
        nonlocal free
        queue.remove(j)
        running[j.id] = (j, now)
        first_start.setdefault(j.id, now)
        free -= j.size

    while pending or queue or running:
        # ---- schedule at time t ---------------------------------------------------------------------------
        for j in order(t):
            if j.size <= free:
                start(j, t)
                continue
            if policy == "priority" and preempt:
                victims = sorted((r for r, _ in running.values() if r.priority < j.priority),
                                 key=lambda r: (r.priority, -running[r.id][1]))
                freed, chosen = free, []
                for v in victims:
                    if freed >= j.size:
                        break
                    chosen.append(v)
                    freed += v.size
                if freed >= j.size:
                    for v in chosen:
                        _, s = running.pop(v.id)
                        lost += v.size * (t - s)
                        free += v.size
                        preempted[v.id] = preempted.get(v.id, 0) + 1
                        queue.append(v)                  # requeued: starts again from scratch
                    start(j, t)
                    continue
            if policy == "backfill":
                ends = sorted((s + r.limit_s, r.size) for r, s in running.values())
                avail, shadow = free, float("inf")
                for end, size in ends:
                    avail += size
                    if avail >= j.size:
                        shadow = end
                        break
                extra = avail - j.size
                for b in order(t):
                    if b is j or b.size > free:
                        continue
                    if t + b.limit_s <= shadow:
                        start(b, t)
                    elif b.size <= extra:
                        start(b, t)
                        extra -= b.size
            break                                          # the head (or first that does not fit) blocks the rest
        # ---- advance to the next event -----------------------------------------------------------------------
        next_end = min((s + r.runtime_s for r, s in running.values()), default=float("inf"))
        next_arrival = pending[i].submit_s if i < len(pending) else float("inf")
        if next_end == float("inf") and next_arrival == float("inf"):
            if queue:
                raise RuntimeError(f"{len(queue)} jobs can never start (nothing running, nothing arriving)")
            break
        t = min(next_end, next_arrival)
        for rid in [rid for rid, (r, s) in running.items() if s + r.runtime_s <= t + 1e-9]:
            r, s = running.pop(rid)
            free += r.size
            usage[r.user] = usage.get(r.user, 0.0) + r.size * r.runtime_s
            done[rid] = JobResult(r.id, r.user, r.size, r.submit_s, first_start[r.id], s + r.runtime_s,
                                  first_start[r.id] - r.submit_s, preempted.get(r.id, 0))
        while i < len(pending) and pending[i].submit_s <= t + 1e-9:
            queue.append(pending[i])
            i += 1
    res = tuple(sorted(done.values(), key=lambda r: r.id))
    t0 = min(j.submit_s for j in jobs)
    makespan = max(r.end_s for r in res) - t0
    work = sum(j.size * j.runtime_s for j in jobs)
    waits = [r.wait_s for r in res]
    return SimResult(policy + ("+preempt" if preempt else ""), nodes, makespan, float(np.mean(waits)),
                     float(np.max(waits)), work / (nodes * makespan), lost, res)


def pod_by_pod(jobs: list[Job], nodes: int) -> dict:
    """Scheduling each pod (one node each) on its own, as a default Kubernetes scheduler does: two jobs that each
    need more than half the nodes can both get *some* pods and then wait for each other forever. Gang scheduling
    (Volcano ``minAvailable``, Kueue admission, Slurm's all-at-once allocation) never holds a partial allocation."""
    holding = {j.id: 0 for j in jobs}
    size = {j.id: j.size for j in jobs}
    free = nodes
    order = [j.id for j in sorted(jobs, key=lambda j: (j.submit_s, j.id))]
    while free and any(holding[j] < size[j] for j in order):      # pods of all jobs arrive interleaved
        for jid in order:
            if free and holding[jid] < size[jid]:
                holding[jid] += 1
                free -= 1
    complete = [jid for jid in order if holding[jid] == size[jid]]
    deadlocked = not complete and free == 0
    return {"pods_placed": holding, "free_nodes": free, "jobs_complete": complete, "deadlock": deadlocked}


def start_ranks(starts: dict[int, float], tol_s: float = 1.5) -> dict[int, int]:
    """Dense ranks of start times, equal within ``tol_s`` (to compare the simulator's order with Slurm's clock)."""
    ranks, rank, last = {}, -1, None
    for jid, s in sorted(starts.items(), key=lambda kv: (kv[1], kv[0])):
        if last is None or s - last > tol_s:
            rank += 1
            last = s
        ranks[jid] = rank
    return ranks


def slurm_check_trace() -> list[Job]:
    """Four jobs on an 8-CPU node where FIFO and backfill disagree (limits in whole minutes, as Slurm keeps them)."""
    return [Job(1, 0.0, 4, 4.0, 180.0), Job(2, 0.0, 8, 2.0, 60.0), Job(3, 0.0, 4, 2.0, 60.0),
            Job(4, 0.0, 4, 1.0, 300.0)]


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers schedsim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=cli.bounded_int(1, 4096), default=16)
    ap.add_argument("--jobs", type=cli.bounded_int(1, 5000), default=60)
    ap.add_argument("--policy", type=cli.csv_of(str), default=["fifo", "backfill"])
    ap.add_argument("--seed", type=cli.bounded_int(0, 2**31 - 1), default=0)
    results.add_output_args(ap)
    args = ap.parse_args(argv)
    trace = synthetic_trace(args.jobs, args.nodes, args.seed)
    recs = [replace(simulate(trace, args.nodes, p), jobs=()) for p in args.policy]
    results.emit(recs, "schedsim", args, columns=["policy", "nodes", "makespan_s", "mean_wait_s", "utilisation"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
