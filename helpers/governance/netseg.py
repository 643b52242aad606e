"""Network segmentation of a GPU cluster: the three networks, the access paths, and a reachability check (chapter 20).

A GPU cluster runs three separate networks ("三张网"): the compute fabric (InfiniBand/RoCE between GPUs), the storage
network (nodes to the parallel file system) and the management network (SSH, Slurm/Kubernetes control, and the
out-of-band BMC/IPMI ports). Users reach it by a leased line (专线) or a VPN from the office and the internet, land on a
bastion host, and go on from there. The model is a directed graph of zones whose edges are the allowed flows
(firewall rules, with the port); ``reachable`` answers "can A reach B, and by which path?", and ``audit`` checks the
policies every auditor asks for: nothing from the internet or the office reaches the BMCs or the storage network.
"""
from __future__ import annotations

import networkx as nx

ZONES = {
    "internet": "untrusted", "office": "corporate LAN", "vpn-gw": "VPN gateway (DMZ)",
    "leased-line": "leased line from the partner site (专线)", "bastion": "bastion / jump host (DMZ)",
    "login": "login nodes", "mgmt": "management network (Slurm, k8s API, monitoring)",
    "bmc": "out-of-band BMC/IPMI network", "compute": "GPU nodes (compute fabric)",
    "storage": "storage network (parallel FS)",
}

RULES = [   # (from, to, port/protocol): the allowed flows; everything else is denied
    ("internet", "vpn-gw", "udp/51820 WireGuard"), ("office", "vpn-gw", "udp/51820 WireGuard"),
    ("leased-line", "bastion", "tcp/22"), ("vpn-gw", "bastion", "tcp/22"),
    ("bastion", "login", "tcp/22"), ("bastion", "mgmt", "tcp/22,6443 (admins only)"),
    ("login", "mgmt", "tcp/6817 slurmctld"), ("mgmt", "compute", "tcp/22,6818 slurmd"),
    ("mgmt", "bmc", "udp/623 IPMI, tcp/443 Redfish"), ("compute", "storage", "RDMA / tcp/2049"),
    ("login", "storage", "tcp/2049 (read-only home)"), ("compute", "compute", "IB verbs"),
]

# zones that forward packets (a VPN gateway routes, a leased line is a link); hosts such as the bastion and login
# nodes end the connection: going on from them takes a new, authenticated session (a "hop")
FORWARDERS = {"vpn-gw", "leased-line", "internet", "office"}

POLICIES = [  # (from, to, must_be_reachable): "unreachable" = no packet path; "reachable" = a path with logins
    ("internet", "bmc", False), ("internet", "storage", False), ("office", "bmc", False),
    ("internet", "compute", False), ("vpn-gw", "login", True), ("leased-line", "login", True),
]


def graph(rules=RULES) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(ZONES)
    for a, b, port in rules:
        if a not in ZONES or b not in ZONES:
            raise ValueError(f"rule {a} -> {b}: unknown zone; zones are {list(ZONES)}")
        g.add_edge(a, b, port=port)
    return g


def reachable(g: nx.DiGraph, src: str, dst: str, with_logins: bool = False) -> list[str] | None:
    """The shortest path of allowed flows from src to dst, or None. By default packets pass only through
    forwarding zones; ``with_logins=True`` also lets a user log in at a host and go on from there."""
    keep = set(g) if with_logins else FORWARDERS | {src, dst}
    h = g.subgraph(keep)
    try:
        return nx.shortest_path(h, src, dst)
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return None


def audit(g: nx.DiGraph, policies=POLICIES) -> list[dict]:
    out = []
    for a, b, want in policies:
        path = reachable(g, a, b)
        hops = reachable(g, a, b, with_logins=True)
        out.append({"from": a, "to": b, "required": "reachable" if want else "unreachable",
                    "packet_path": " → ".join(path) if path else "—",
                    "with_logins": " → ".join(hops) if hops else "—",
                    "ok": (hops is not None) if want else (path is None)})
    return out


# fixed drawing positions (x: outside -> inside, y: spread), so the diagram is the same on every run
POSITIONS = {"internet": (0, 3), "office": (0, 1.5), "leased-line": (0, 0), "vpn-gw": (1, 2.2),
             "bastion": (2, 1), "login": (3, 2), "mgmt": (3, 0), "bmc": (4, -1), "compute": (4, 1.2),
             "storage": (5, 2.4)}
