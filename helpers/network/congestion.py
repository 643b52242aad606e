"""Incast on one switch port, with no control, with PFC, and with ECN + DCQCN (chapter 3).

A fluid model, stepped every ``dt_us``: ``n_senders`` flows at line rate converge on one egress port of the same
rate (an all-to-all or a parameter fetch does this), and a *victim* flow shares sender 0's link but goes to an
idle receiver. Three switch/NIC configurations, naive first:

* ``none`` — drop-tail: the queue fills its buffer and drops; RoCE NICs recover with go-back-N, so every drop
  also throws away what that flow delivers in the next round trip (counted as wasted, not as goodput).
* ``pfc`` — IEEE 802.1Qbb: when an ingress port's bytes in the queue pass ``xoff``, the switch pauses that
  ingress (after ``pfc_delay_us``, which the headroom absorbs) and resumes it below ``xon``. No drops — but the
  pause stops the victim too, which shares the paused link (head-of-line blocking).
* ``dcqcn`` — the switch marks dequeued bytes with ECN with a probability rising from 0 at ``kmin`` to ``pmax``
  at ``kmax`` (RED); the receiver sends at most one CNP per flow every ``cnp_interval_us``; the sender cuts its
  rate by α/2 per CNP and recovers in steps (fast recovery, additive and hyper increase) every
  ``timer_us`` — Zhu et al., SIGCOMM 2015, §3. PFC stays on underneath as the safety net.

Marking is deterministic (each flow accumulates marked bytes and a CNP fires when the expectation reaches one
packet), so a run is reproducible without a random seed.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

MODES = ("none", "pfc", "dcqcn")


@dataclass(frozen=True)
class Config:
    n_senders: int = 8
    line_Gbps: float = 100.0
    duration_us: int = 2000
    dt_us: float = 1.0
    buffer_bytes: int = 1_000_000       # the congested port's share of the switch buffer
    rtt_us: float = 8.0                 # feedback delay (CNP, go-back-N)
    mtu_bytes: int = 4096
    victim_Gbps: float = 50.0           # what the victim offers on sender 0's link
    xoff_bytes: int = 60_000            # PFC, per ingress port
    xon_bytes: int = 40_000
    pfc_delay_us: float = 2.0
    kmin_bytes: int = 20_000            # ECN/RED marking, DCQCN's switch side
    kmax_bytes: int = 200_000
    pmax: float = 0.2
    g: float = 1 / 256                  # DCQCN paper: α gain
    cnp_interval_us: float = 50.0       # DCQCN paper: at most one CNP per flow per 50 µs
    timer_us: float = 55.0              # DCQCN paper: rate-increase and α timers
    fast_recovery_steps: int = 5        # DCQCN paper: F = 5
    rai_Gbps: float = 0.5               # additive increase (book's choice, larger than the paper's for a 2 ms run)
    rhai_Gbps: float = 2.5
    window_us: float = 50.0             # for throughput and fairness series

    def __post_init__(self):
        if self.n_senders < 1 or self.duration_us < 10 or self.dt_us <= 0:
            raise ValueError(f"n_senders={self.n_senders}, duration_us={self.duration_us}, dt_us={self.dt_us}: "
                             "need ≥ 1 sender, ≥ 10 µs and a positive step")
        if not 0 < self.xon_bytes < self.xoff_bytes or not 0 <= self.kmin_bytes < self.kmax_bytes:
            raise ValueError(f"need 0 < xon < xoff and kmin < kmax, got xon={self.xon_bytes}, "
                             f"xoff={self.xoff_bytes}, kmin={self.kmin_bytes}, kmax={self.kmax_bytes}")


@dataclass(frozen=True)
class Summary:
    mode: str
    max_queue_bytes: int
    dropped_bytes: int
    incast_goodput_Gbps: float       # useful bytes delivered to the incast receiver
    victim_Gbps: float               # the victim flow's delivered rate
    paused_fraction: float           # share of time sender 0's link was paused
    fairness_jain: float             # Jain's index of the incast flows' goodput over the run


def _ecn_p(q: float, c: Config) -> float:
    if q <= c.kmin_bytes:
        return 0.0
    return c.pmax if q >= c.kmax_bytes else c.pmax * (q - c.kmin_bytes) / (c.kmax_bytes - c.kmin_bytes)


def dcqcn_on_cnp(rc, rt, alpha, c: Config):
    """Reaction point on a CNP: remember the rate as target, cut by α/2, raise α (DCQCN paper, Eq. 1–2)."""
    return rc * (1 - alpha / 2), rc, (1 - c.g) * alpha + c.g


def dcqcn_on_timer(rc, rt, stage, line, c: Config):
    """Rate increase every ``timer_us`` without a CNP: fast recovery, then additive, then hyper increase."""
    if stage < c.fast_recovery_steps:
        pass                                               # fast recovery: only move halfway back to the target
    elif stage < 2 * c.fast_recovery_steps:
        rt = rt + c.rai_Gbps
    else:
        rt = rt + c.rhai_Gbps
    rt = min(rt, line)
    return (rc + rt) / 2, rt, stage + 1


def cnps_to_reach(rate_Gbps: float, share_Gbps: float, alpha: float = 1.0, cfg: Config = Config()) -> int:
    """How many CNPs in a row (no increase between them) bring a sender from ``rate_Gbps`` to ``share_Gbps``."""
    if not 0 < share_Gbps <= rate_Gbps or not 0 < alpha <= 1:
        raise ValueError(f"need 0 < share ≤ rate and 0 < α ≤ 1, got {share_Gbps}, {rate_Gbps}, {alpha}")
    n, target = 0, rate_Gbps
    while rate_Gbps > share_Gbps:
        rate_Gbps, target, alpha = dcqcn_on_cnp(rate_Gbps, target, alpha, cfg)
        n += 1
    return n


def simulate(mode: str, cfg: Config = Config()) -> tuple[Summary, dict[str, np.ndarray]]:
    """Run one configuration; returns its summary and per-window series (time, queue, goodput, victim, fairness)."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: use one of {MODES}")
    c, n = cfg, cfg.n_senders
    steps = int(round(c.duration_us / c.dt_us))
    cap = c.line_Gbps * 1e9 / 8 * c.dt_us * 1e-6              # bytes per step on a link
    rate = np.full(n, c.line_Gbps)                          # Gb/s each incast sender wants
    target, alpha, stage = rate.copy(), np.ones(n), np.zeros(n, int)
    last_cnp, last_timer = np.full(n, -1e9), np.zeros(n)
    mark_credit = np.zeros(n)
    queue = np.zeros(n)                                     # bytes of each flow in the egress queue
    paused = np.zeros(n, bool)
    pause_at = np.full(n, np.inf)
    resume_at = np.full(n, np.inf)
    discard_until = np.full(n, -1.0)
    cnp_due: list[tuple[float, int]] = []
    dropped = good = 0.0
    per_flow_good = np.zeros(n)
    win = max(1, int(round(c.window_us / c.dt_us)))
    s_q, s_good, s_victim, s_fair, s_pause = [], [], [], [], []
    w_good, w_victim, w_flow, w_pause, w_q = 0.0, 0.0, np.zeros(n), 0, 0.0
    for k in range(steps):
        t = k * c.dt_us
        if mode != "none":                                 # PFC frames take effect after their delay
            paused |= t >= pause_at
            pause_at[t >= pause_at] = np.inf
            hit = t >= resume_at
            paused &= ~hit
            resume_at[hit] = np.inf
        want = rate * 1e9 / 8 * c.dt_us * 1e-6
        victim_want = c.victim_Gbps * 1e9 / 8 * c.dt_us * 1e-6
        share0 = min(1.0, cap / (want[0] + victim_want))         # sender 0's link carries both
        send = np.where(paused, 0.0, want)
        send[0] *= share0
        victim = 0.0 if paused[0] else victim_want * share0
        free = c.buffer_bytes - queue.sum()
        if send.sum() > free:                              # drop-tail (PFC keeps it from happening)
            keep = max(free, 0.0) / send.sum()
            lost = send * (1 - keep)
            dropped += lost.sum()
            discard_until[lost > 0] = t + c.rtt_us + queue.sum() / cap * c.dt_us
            send = send * keep
        queue += send
        tot = queue.sum()
        out = queue * (min(cap, tot) / tot) if tot > 0 else np.zeros(n)
        queue -= out
        useful = np.where(t < discard_until, 0.0, out)
        good += useful.sum()
        per_flow_good += useful
        if mode != "none":
            pause_at[(queue > c.xoff_bytes) & ~paused & np.isinf(pause_at)] = t + c.pfc_delay_us
            resume_at[(queue < c.xon_bytes) & paused & np.isinf(resume_at)] = t + c.pfc_delay_us
        if mode == "dcqcn":
            mark_credit += out * _ecn_p(tot, c) / c.mtu_bytes
            for f in np.flatnonzero((mark_credit >= 1) & (t - last_cnp >= c.cnp_interval_us)):
                last_cnp[f], mark_credit[f] = t, 0.0
                cnp_due.append((t + c.rtt_us, f))
            while cnp_due and cnp_due[0][0] <= t:
                _, f = cnp_due.pop(0)
                rate[f], target[f], alpha[f] = dcqcn_on_cnp(rate[f], target[f], alpha[f], c)
                stage[f], last_timer[f] = 0, t
            for f in np.flatnonzero(t - last_timer >= c.timer_us):
                if t - last_cnp[f] >= c.timer_us:
                    alpha[f] *= 1 - c.g
                rate[f], target[f], stage[f] = dcqcn_on_timer(rate[f], target[f], stage[f], c.line_Gbps, c)
                last_timer[f] = t
        w_good += useful.sum()
        w_victim += victim
        w_flow += useful
        w_pause += bool(paused[0])
        w_q = max(w_q, tot - out.sum())
        if (k + 1) % win == 0:
            span_s = win * c.dt_us * 1e-6
            s_q.append(w_q)
            s_good.append(w_good * 8 / span_s / 1e9)
            s_victim.append(w_victim * 8 / span_s / 1e9)
            s_fair.append(jain(w_flow))
            s_pause.append(w_pause / win)
            w_good, w_victim, w_flow, w_pause, w_q = 0.0, 0.0, np.zeros(n), 0, 0.0
    series = {"t_us": (np.arange(len(s_q)) + 1) * win * c.dt_us, "queue_bytes": np.array(s_q),
              "goodput_Gbps": np.array(s_good), "victim_Gbps": np.array(s_victim),
              "fairness": np.array(s_fair), "paused": np.array(s_pause)}
    span = steps * c.dt_us * 1e-6
    summ = Summary(mode, int(series["queue_bytes"].max()), int(round(dropped)), good * 8 / span / 1e9,
                   float(series["victim_Gbps"].mean()), float(series["paused"].mean()), jain(per_flow_good))
    return summ, series


def jain(x) -> float:
    """Jain's fairness index (Σx)² / (n Σx²): 1 when all flows get the same, 1/n when one gets everything."""
    x = np.asarray(x, float)
    s2 = (x ** 2).sum()
    return float(x.sum() ** 2 / (len(x) * s2)) if s2 > 0 else 1.0


def compare(cfg: Config = Config(), **changes) -> tuple[list[Summary], dict[str, dict]]:
    """All three modes on the same incast; keyword arguments change the configuration."""
    cfg = replace(cfg, **changes)
    out = {m: simulate(m, cfg) for m in MODES}
    return [s for s, _ in out.values()], {m: ser for m, (_, ser) in out.items()}
