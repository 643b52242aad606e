"""Fabrics beyond the full rail-optimised fat-tree: scalable units with node slots given to appliances, fabrics of
several planes, and dual-ToR, dual-plane pods of segments (chapter 24, "Out of sample").

* ``su_fabric`` sizes a DGX SuperPOD-style compute fabric the way the reference architectures say it is built: for
  *full* SUs ("the fabric should be designed to support the full SU, including leaf switches and leaf-spine cables"),
  whatever number of node slots are left to management appliances, and once per plane. The rule it was built on is
  ``fabric.superpod_counts`` (the B200 table); ``spread="even"`` adds one rule of a balanced Clos that the B200
  table cannot show: every leaf runs the same number of cables to every spine, so the spine count divides a leaf's
  uplink count.
* ``hpn_pod`` sizes an Alibaba HPN-style pod (Qian et al., SIGCOMM 2024): NICs of two ports, each port to its own
  ToR (dual-ToR), rail-optimised segments, and a tier-2 of one plane (single-plane), two planes (one per NIC port) or
  one plane per rail and port (rail-only), with an oversubscribed Aggregation-to-Core layer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from helpers.network import fabric


@dataclass(frozen=True)
class SUFabric:
    su: int
    nodes: int
    gpus: int
    planes: int
    leaf: int                   # all planes together
    spine: int
    core: int
    node_leaf_cables: int       # GPU (and appliance) to leaf
    leaf_spine_cables: int
    spine_core_cables: int


def _spines(leaves: int, up: int, radix: int, spread: str) -> int:
    s = math.ceil(leaves * up / radix)
    if spread == "even":                         # equal cables from each leaf to each spine: s divides up
        s = next(d for d in range(s, up + 1) if up % d == 0)
    return s


def su_fabric(su: int, nodes_per_su: int = 32, gpus_per_node: int = 8, radix: int = 64, appliance_slots: int = 0,
              appliances: int = 0, planes: int = 1, link_Gbps: float = 400.0, cable_Gbps: float | None = None,
              spread: str = "even") -> SUFabric:
    """Compute fabric of ``su`` scalable units of ``nodes_per_su`` node slots, ``appliance_slots`` of them (in the
    whole system) holding ``appliances`` appliances with one fabric port each; one leaf per rail and SU per plane,
    leaves with ``radix/2`` ports down and up; ``cable_Gbps`` > ``link_Gbps`` packs several plane links in one cable."""
    if spread not in ("even", "ceil"):
        raise ValueError(f"spread={spread!r}: use 'even' (equal cables leaf-to-spine) or 'ceil' (B200 rule)")
    if su < 1 or planes < 1 or not 0 <= appliance_slots < su * nodes_per_su:
        raise ValueError(f"su={su} ≥ 1, planes={planes} ≥ 1 and 0 ≤ appliance_slots < all node slots are required")
    half = radix // 2
    per_leaf = min(half, nodes_per_su)
    leaves_su = gpus_per_node * math.ceil(nodes_per_su / per_leaf)
    slots = su * nodes_per_su * gpus_per_node             # leaf ports down, per plane: the full SUs are cabled
    nodes = su * nodes_per_su - appliance_slots
    per_cable = max(1, round((cable_Gbps or link_Gbps) / link_Gbps))
    leaf = su * leaves_su
    up_links = leaf * half                                # leaf-spine links per plane
    if slots <= radix * radix // 2:                       # two tiers
        spine, core, core_links = _spines(leaf, half, radix, spread), 0, 0
    else:                                                 # three tiers: the fat-tree arithmetic of fabric.py
        c = fabric.fat_tree_counts(slots, radix, link_Gbps)
        spine, core, core_links = c.spine, c.core, slots
    gpus = nodes * gpus_per_node
    node_links = gpus * planes
    return SUFabric(su, nodes, gpus, planes, leaf * planes, spine * planes, core * planes,
                    node_links // per_cable + appliances, up_links * planes // per_cable,
                    core_links * planes // per_cable)


def superpod_check(name: str, spread: str = "even"):
    """Published rows of ``published_fabrics.yaml[name]`` next to ``su_fabric``'s prediction: a DataFrame with one
    row per (SU count, quantity) and the error (model − published)."""
    import pandas as pd

    d = fabric.published()[name]
    kw = dict(nodes_per_su=d["nodes_per_su"], gpus_per_node=d["gpus_per_node"], radix=d["switch_radix"],
              planes=d.get("planes", 1), link_Gbps=d["link_Gbps"], cable_Gbps=d.get("cable_Gbps"), spread=spread,
              appliance_slots=1 if d.get("appliances") else 0, appliances=d.get("appliances", 0))
    names = {"compute_and_ufm_cables": "node_leaf_cables", "spine_leaf_cables": "leaf_spine_cables"}
    rows = []
    for r in d["rows"]:
        pub = dict(zip(d["columns"], r))
        m = vars(su_fabric(pub["su"], **kw))
        for col, v in pub.items():
            if col != "su":
                rows.append(dict(design=name, su=pub["su"], quantity=col, published=v,
                                 model=m[names.get(col, col)], error=m[names.get(col, col)] - v))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class HPNPod:
    tier2: str
    dual_tor: bool
    rail_optimised: bool
    gpus_per_tor_set: int       # tier-1 scale without rails (one ToR, or one dual-ToR pair)
    gpus_per_segment: int       # tier-1 scale
    tors_per_segment: int
    planes: int
    aggs_per_plane: int
    segments: int
    gpus_per_pod: int           # tier-2 scale
    tors: int
    aggs: int
    tor_oversubscription: float
    pod_bisection_Tbps: float   # one direction, half the pod's GPUs against the other half
    pod_uplink_Tbps: float      # Aggregation to Core, what leaves the pod


def hpn_pod(tier2: str = "dual-plane", dual_tor: bool = True, rail_optimised: bool = True, rails: int = 8,
            nic_ports: int = 2, port_Gbps: float = 200, tor_down_ports: int = 128, tor_up_ports: int = 60,
            up_Gbps: float = 400, agg_radix: int = 128, agg_core_oversubscription: float = 15) -> HPNPod:
    """An HPN-style pod. Each GPU has one NIC of ``nic_ports`` ports; with ``dual_tor`` each port goes to its own
    ToR (a ToR gives each GPU of its set one port), without it both ports go to one ToR. Each ToR sends one uplink
    to every Aggregation switch of its plane; an Aggregation switch keeps ``agg_radix`` × o/(o+1) ports down."""
    if tier2 not in ("single-plane", "dual-plane", "rail-only"):
        raise ValueError(f"tier2={tier2!r}: use 'single-plane', 'dual-plane' or 'rail-only'")
    if tier2 != "single-plane" and not (dual_tor and rail_optimised):
        raise ValueError(f"tier2={tier2!r} splits the ToRs of a dual-ToR, rail-optimised segment into planes: "
                         "set dual_tor=True and rail_optimised=True, or use tier2='single-plane'")
    per_set = tor_down_ports if dual_tor else tor_down_ports // nic_ports
    tors_per_set = nic_ports if dual_tor else 1
    seg_rails = rails if rail_optimised else 1
    gpus_seg, tors_seg = per_set * seg_rails, tors_per_set * seg_rails
    planes = {"single-plane": 1, "dual-plane": nic_ports, "rail-only": nic_ports * rails}[tier2]
    o = agg_core_oversubscription
    agg_down = int(agg_radix * o / (o + 1))
    segments = agg_down // (tors_seg // planes)           # an Aggregation switch meets each of its plane's ToRs once
    gpus = segments * gpus_seg
    aggs = tor_up_ports * planes
    tor_os = tor_down_ports * port_Gbps / (tor_up_ports * up_Gbps)
    gpu_Gbps = nic_ports * port_Gbps
    return HPNPod(tier2, dual_tor, rail_optimised, per_set, gpus_seg, tors_seg, planes, tor_up_ports, segments, gpus,
                  segments * tors_seg, aggs, round(tor_os, 3), gpus / 2 * gpu_Gbps / max(1.0, tor_os) / 1000,
                  aggs * (agg_radix - agg_down) * up_Gbps / 1000)


def hpn_table2():
    """Alibaba HPN's Table 2, one mechanism added per row, against ``hpn_pod``: tier-1 and tier-2 GPUs (K = 1024)."""
    import pandas as pd

    d = fabric.published()["alibaba_hpn"]
    kw = {k: d[k] for k in ("rails", "nic_ports", "port_Gbps", "tor_down_ports", "tor_up_ports", "up_Gbps", "agg_radix")}
    steps = [dict(dual_tor=False, rail_optimised=False, tier2="single-plane", agg_core_oversubscription=1),
             dict(dual_tor=True, rail_optimised=False, tier2="single-plane", agg_core_oversubscription=1),
             dict(dual_tor=True, rail_optimised=True, tier2="single-plane", agg_core_oversubscription=1),
             dict(dual_tor=True, rail_optimised=True, tier2="dual-plane", agg_core_oversubscription=1),
             dict(dual_tor=True, rail_optimised=True, tier2="dual-plane",
                  agg_core_oversubscription=d["agg_core_oversubscription"])]
    rows = []
    for (mech, t1, t2), s in zip(d["table2"], steps):
        p = hpn_pod(**kw, **s)
        rows.append(dict(mechanism=mech, tier1_published=t1, tier1_model=p.gpus_per_segment,
                         tier2_K_published=t2, tier2_K_model=round(p.gpus_per_pod / 1024, 2)))
    return pd.DataFrame(rows)
