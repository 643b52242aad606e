"""Training on spot (preemptible) GPUs: interruptions, checkpoints, and what it costs against on-demand (chapter 21).

A job needs ``work_h`` hours of computation on ``gpus`` GPUs. It writes a checkpoint after every ``interval_h`` of
work, which takes ``ckpt_h``. Interruptions arrive as a Poisson process of rate ``1/mtbi_h`` (mean time between
interruptions); each one loses the work since the last checkpoint, then the job waits ``wait_h`` for capacity
(not billed) and spends ``restore_h`` reloading (billed). Billed GPU-hours × price is the cost.

Two simulators, tested against each other: ``simulate_naive`` walks time in small steps and flips a coin each
step; ``simulate`` jumps from interruption to interruption (exponential gaps). The best interval is near Young's
τ = √(2·δ·M) (Young 1974, CACM 17(9); chapter 14 derives it; ``helpers.formulas.checkpointing.young``, which takes
hours as well as seconds), δ the checkpoint time and M the MTBI.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SpotJob:
    work_h: float = 100.0
    gpus: int = 64
    interval_h: float = 1.0
    ckpt_h: float = 0.05
    mtbi_h: float = 8.0             # mean time between interruptions of the job's capacity
    wait_h: float = 0.25            # waiting for capacity to come back (unbilled)
    restore_h: float = 0.1          # loading the checkpoint, warming up (billed)

    def __post_init__(self):
        if min(self.work_h, self.interval_h, self.mtbi_h) <= 0 or min(self.ckpt_h, self.wait_h, self.restore_h) < 0:
            raise ValueError(f"{self}: work_h, interval_h and mtbi_h must be > 0; ckpt_h, wait_h, restore_h ≥ 0")
        if self.gpus < 1:
            raise ValueError(f"gpus={self.gpus} must be ≥ 1")


@dataclass(frozen=True)
class SpotRun:
    wall_h: float
    billed_h: float
    interruptions: int
    lost_work_h: float
    efficiency: float               # work_h / billed_h


def simulate_naive(job: SpotJob, seed: int = 0, dt_h: float = 1 / 600) -> SpotRun:
    """Time-stepped: every ``dt_h`` an interruption happens with probability 1 − exp(−dt/M). Slow; the reference."""
    rng = np.random.default_rng(seed)
    p = 1 - math.exp(-dt_h / job.mtbi_h)
    done = since_ckpt = in_ckpt = 0.0
    wall = billed = lost = 0.0
    n = 0
    while done < job.work_h - 1e-12:
        wall += dt_h
        billed += dt_h
        if rng.random() < p:                      # interrupted: lose the uncheckpointed work
            n += 1
            lost += since_ckpt
            done -= since_ckpt
            since_ckpt = in_ckpt = 0.0
            wall += job.wait_h + job.restore_h
            billed += job.restore_h
            continue
        if in_ckpt > 0:                            # writing a checkpoint
            in_ckpt -= dt_h
            if in_ckpt <= 1e-12:
                in_ckpt, since_ckpt = 0.0, 0.0
            continue
        done += dt_h
        since_ckpt += dt_h
        if since_ckpt >= job.interval_h - 1e-12 and done < job.work_h - 1e-12:
            in_ckpt = job.ckpt_h if job.ckpt_h > 0 else 0.0
            if in_ckpt == 0:
                since_ckpt = 0.0
    return SpotRun(wall, billed, n, lost, job.work_h / billed)


def simulate(job: SpotJob, seed: int = 0) -> SpotRun:
    """Event-driven: work in segments of (interval + checkpoint); draw the time to the next interruption."""
    rng = np.random.default_rng(seed)
    done = wall = billed = lost = 0.0
    n = 0
    next_fail = rng.exponential(job.mtbi_h)
    while done < job.work_h - 1e-12:
        work = min(job.interval_h, job.work_h - done)
        seg = work + (job.ckpt_h if done + work < job.work_h - 1e-12 else 0.0)
        if next_fail >= seg:                        # the segment (and its checkpoint) completes
            wall += seg
            billed += seg
            done += work
            next_fail -= seg
            continue
        n += 1
        lost += min(next_fail, work)
        wall += next_fail + job.wait_h + job.restore_h
        billed += next_fail + job.restore_h
        next_fail = rng.exponential(job.mtbi_h)
    return SpotRun(wall, billed, n, lost, job.work_h / billed)


@dataclass(frozen=True)
class SpotCost:
    interval_h: float
    mean_wall_h: float
    p90_wall_h: float
    mean_billed_gpu_h: float
    mean_cost_usd: float
    ondemand_cost_usd: float         # work_h (+ its checkpoints) at the on-demand price, no interruptions
    saving_frac: float
    mean_interruptions: float


def monte_carlo(job: SpotJob, spot_usd: float, ondemand_usd: float, runs: int = 200, seed: int = 0) -> SpotCost:
    """Mean cost and time of ``runs`` seeded spot runs against one uninterrupted on-demand run."""
    if runs < 1 or spot_usd <= 0 or ondemand_usd <= 0:
        raise ValueError(f"runs={runs} ≥ 1 and prices ({spot_usd}, {ondemand_usd}) > 0 are required")
    rs = [simulate(job, seed + i) for i in range(runs)]
    walls = np.array([r.wall_h for r in rs])
    billed = np.mean([r.billed_h for r in rs]) * job.gpus
    od_hours = job.work_h + job.ckpt_h * max(0, math.ceil(job.work_h / job.interval_h) - 1)
    od = od_hours * job.gpus * ondemand_usd
    cost = billed * spot_usd
    return SpotCost(job.interval_h, float(walls.mean()), float(np.percentile(walls, 90)), float(billed), float(cost),
                    float(od), float(1 - cost / od), float(np.mean([r.interruptions for r in rs])))
