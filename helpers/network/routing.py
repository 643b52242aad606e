"""ECMP vs adaptive routing on a leaf-spine fabric, flow by flow; and how job placement changes all-reduce time
(chapter 24).

Flow-level model: every flow between two leaves takes one spine; links share their capacity max-min fairly among the
flows that cross them (progressive filling: raise all rates together, freeze the flows of the first link that fills).

* ECMP hashes each flow's 5-tuple onto one of the equal-cost spines: the choice ignores load, so two big flows can
  land on the same uplink (a hash collision) while another uplink idles.
* Adaptive routing (as in InfiniBand AR or Spectrum-X) sends traffic to a less-loaded output. Two flow-level
  versions: ``adaptive-local`` is what one switch can do — the source leaf picks its least-loaded *uplink* and cannot
  see the spine→destination downlink; ``adaptive`` picks the spine with the fewest flows on uplink *and* downlink
  together, which needs global knowledge: a centralised greedy scheduler, an upper bound on switch-local adaptive
  routing rather than a model of it. Both place whole flows (no flowlets, no queues); the ideal of per-packet
  spraying (``spray``) spreads every flow over all spines.

    from helpers.network import routing
    f = routing.LeafSpine(leaves=8, spines=8, hosts_per_leaf=8)
    routing.throughput(f, routing.permutation(f, seed=0), "ecmp", seed=0).mean_rate_frac
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from helpers.formulas import comm


@dataclass(frozen=True)
class LeafSpine:
    leaves: int = 8
    spines: int = 8
    hosts_per_leaf: int = 8
    host_Gbps: float = 400.0
    uplink_Gbps: float = 400.0          # each leaf has one uplink to every spine

    def __post_init__(self):
        if min(self.leaves, self.spines, self.hosts_per_leaf) < 1:
            raise ValueError(f"{self}: leaves, spines and hosts_per_leaf must be ≥ 1")

    @property
    def hosts(self) -> int:
        return self.leaves * self.hosts_per_leaf

    @property
    def oversubscription(self) -> float:
        return self.hosts_per_leaf * self.host_Gbps / (self.spines * self.uplink_Gbps)

    def leaf_of(self, host: int) -> int:
        return host // self.hosts_per_leaf


def permutation(f: LeafSpine, seed: int = 0) -> list[tuple[int, int]]:
    """Every host sends to one other host and receives from one (a random derangement): a full-bisection load."""
    rng = np.random.default_rng(seed)
    while True:
        p = rng.permutation(f.hosts)
        if not np.any(p == np.arange(f.hosts)):
            return [(i, int(p[i])) for i in range(f.hosts)]


def all_to_all(hosts: list[int]) -> list[tuple[int, int]]:
    return [(a, b) for a in hosts for b in hosts if a != b]


def ecmp_spine(src: int, dst: int, sport: int, spines: int, seed: int = 0) -> int:
    """ECMP: hash the flow's header fields (here source, destination and UDP source port) onto one of ``spines``
    equal-cost spines. The choice ignores load; every packet of the flow takes it, so packets stay in order."""
    key = f"{seed}:{src}:{dst}:{sport}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=4).digest(), "little") % spines


def adaptive_spine(load: dict, src_leaf: int, dst_leaf: int, spines: int, local: bool = False, tie: int = 0) -> int:
    """Adaptive choice of a spine from ``load`` (flows already placed per link).

    ``local=False``: the spine with the fewest flows on uplink + downlink — this needs the downlink loads of other
    switches, i.e. a centralised view: an upper bound on what switch-local adaptive routing achieves.
    ``local=True``: what the source leaf itself sees — only its own uplinks; ties broken by ``tie`` (the flow's hash)."""
    if not local:
        def both(j):                                   # flows on leaf→spine j plus spine j→destination leaf
            return load.get(("up", src_leaf, j), 0) + load.get(("down", j, dst_leaf), 0)
        return min(range(spines), key=lambda j: (both(j), j))
    up = [load.get(("up", src_leaf, j), 0) for j in range(spines)]
    least = [j for j in range(spines) if up[j] == min(up)]
    return least[tie % len(least)]


ROUTINGS = ("ecmp", "adaptive-local", "adaptive")


def paths(f: LeafSpine, flows, routing: str, seed: int = 0) -> list[list[tuple]]:
    """Link ids of each flow: ('up', leaf, spine), ('down', spine, leaf), plus the host NIC links; flows are placed
    one after another, each seeing the load of those placed before it."""
    if routing not in ROUTINGS:
        raise ValueError(f"routing={routing!r}: use one of {ROUTINGS} (or 'spray' in throughput)")
    load = {}
    out = []
    for i, (s, d) in enumerate(flows):
        ls, ld = f.leaf_of(s), f.leaf_of(d)
        path = [("nic_tx", s), ("nic_rx", d)]
        if ls != ld:
            h = ecmp_spine(s, d, 49152 + i, f.spines, seed)
            sp = h if routing == "ecmp" else adaptive_spine(load, ls, ld, f.spines, local=routing == "adaptive-local",
                                                            tie=h)
            for link in (("up", ls, sp), ("down", sp, ld)):
                load[link] = load.get(link, 0) + 1
                path.append(link)
        out.append(path)
    return out


def max_min_rates(flow_paths, capacity) -> np.ndarray:
    """Max-min fair rates (Gb/s) of flows over links: progressive filling."""
    links = sorted({l for p in flow_paths for l in p})
    idx = {l: i for i, l in enumerate(links)}
    A = np.zeros((len(links), len(flow_paths)))
    for j, p in enumerate(flow_paths):
        for l in p:
            A[idx[l], j] += 1
    cap = np.array([capacity(l) for l in links], dtype=float)
    rate = np.zeros(len(flow_paths))
    active = np.ones(len(flow_paths), dtype=bool)
    while active.any():
        n = A[:, active].sum(axis=1)
        used = A @ rate
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(n > 0, (cap - used) / n, np.inf)
        k = int(np.argmin(share))
        rate[active] += share[k]
        frozen = active & (A[k] > 0)
        active &= ~frozen
    return rate


@dataclass(frozen=True)
class FlowResult:
    routing: str
    flows: int
    mean_rate_frac: float       # mean flow rate / host line rate
    min_rate_frac: float
    max_uplink_flows: int       # the most flows sharing one leaf→spine link (collisions)


def throughput(f: LeafSpine, flows, routing: str = "ecmp", seed: int = 0) -> FlowResult:
    """Max-min fair rates of ``flows`` under ``routing``: one of ``ROUTINGS`` or 'spray' (ideal per-packet)."""
    if routing == "spray":                 # every flow split evenly over all spines = one virtual fat uplink
        ps = []
        for s, d in flows:
            ls, ld = f.leaf_of(s), f.leaf_of(d)
            ps.append([("nic_tx", s), ("nic_rx", d)] + ([("up", ls), ("down", ld)] if ls != ld else []))

        def cap(l):
            return f.host_Gbps if l[0].startswith("nic") else f.spines * f.uplink_Gbps
    else:
        ps = paths(f, flows, routing, seed)

        def cap(l):
            return f.host_Gbps if l[0].startswith("nic") else f.uplink_Gbps
    r = max_min_rates(ps, cap) / f.host_Gbps
    ups = {}
    for p in ps:
        for l in p:
            if l[0] == "up":
                ups[l] = ups.get(l, 0) + 1
    return FlowResult(routing, len(flows), float(r.mean()), float(r.min()), max(ups.values(), default=0))


def ring_allreduce_s(f: LeafSpine, hosts: list[int], size_bytes: float, routing: str = "ecmp",
                     background=(), seed: int = 0) -> float:
    """Ring all-reduce time of ``size_bytes`` over ``hosts`` (in ring order) sharing the fabric with ``background``
    flows: 2(n−1)/n · S / (slowest ring flow's rate) — the ring moves at the pace of its slowest hop."""
    n = len(hosts)
    if n < 2:
        return 0.0
    ring = [(hosts[i], hosts[(i + 1) % n]) for i in range(n)]
    flows = ring + list(background)
    if routing == "spray":
        raise ValueError(f"use one of {ROUTINGS} for placement studies")
    rates = max_min_rates(paths(f, flows, routing, seed),
                          lambda l: f.host_Gbps if l[0].startswith("nic") else f.uplink_Gbps)
    slowest_GBps = rates[:n].min() / 8
    return comm.ring_bw_s(size_bytes, n, slowest_GBps)


def placements(f: LeafSpine, n: int, seed: int = 0) -> dict[str, list[int]]:
    """Three ways to place an ``n``-host job: packed (fewest leaves), spread round-robin over leaves, random."""
    if not 1 <= n <= f.hosts:
        raise ValueError(f"n={n}: give 1..{f.hosts} hosts")
    spread = sorted(range(f.hosts), key=lambda h: (h % f.hosts_per_leaf, h // f.hosts_per_leaf))[:n]
    rng = np.random.default_rng(seed)
    return {"packed": list(range(n)), "spread": spread, "random": sorted(rng.choice(f.hosts, n, replace=False).tolist())}
