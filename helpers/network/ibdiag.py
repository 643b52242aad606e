"""Diagnose an InfiniBand fabric from ibstat / ibstatus / ibv_devinfo / perfquery / ibdiagnet output (chapter 03).

The eight faults of the book's troubleshooting lab (from the course outline's 故障检测与诊断 cases), each with a
rule that reads the parsed tools (:mod:`helpers.network.ibparse`) and the fabric's inventory (``data/ib/fabric.yaml``:
switches, LIDs, which leaf port every HCA is cabled to, the parallel uplinks), and the fix an engineer applies.

    python -m helpers ibdiag                     # every shipped scenario: the fault each sample shows
    python -m helpers ibdiag --sample packet_loss
    python -m helpers ibdiag --live --json       # run the tools on this host (when installed) and diagnose

Rules are checked in order of severity; the first fault found is the primary one, "healthy" when none fires.
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter as Tally
from dataclasses import dataclass
from pathlib import Path

from helpers.network import ibparse

def _faults() -> dict:
    """fault -> (title, 中文, fix) from data/ib/faults.yaml, in order of severity."""
    import yaml

    rows = yaml.safe_load((ibparse.DATA / "faults.yaml").read_text())
    return {r["fault"]: (r["title"], r["zh"], r["fix"]) for r in rows}


FAULTS = _faults()
ORDER = tuple(FAULTS)
DOWN_STATES = ("Down", "Initializing")


@dataclass(frozen=True)
class Finding:
    fault: str
    component: str
    evidence: str


@dataclass(frozen=True)
class Inventory:
    names: dict          # lid -> "leaf01" / "gpu04/U1"
    peer_leaf: dict      # (host, ca) -> (leaf, leaf_port)
    uplinks: dict        # (leaf_lid, port) -> "leaf01/P19 → spine02/P1"
    switches: int
    cas: int
    rate_Gbps: float
    width: str


def load_inventory(path: str | Path | None = None) -> Inventory:
    import yaml

    doc = yaml.safe_load(Path(path or ibparse.DATA / "fabric.yaml").read_text())
    sw = {s["name"]: s["lid"] for s in doc["switches"]}
    names = {s["lid"]: s["name"] for s in doc["switches"]}
    names.update({c["lid"]: f"{c['host']}/U{int(c['ca'].split('_')[-1]) + 1}" for c in doc["cas"]})
    peer = {(c["host"], c["ca"]): (c["leaf"], c["leaf_port"]) for c in doc["cas"]}
    up = {(sw[u["leaf"]], u["leaf_port"]): f"{u['leaf']}/P{u['leaf_port']} → {u['spine']}/P{u['spine_port']}"
          for u in doc["uplinks"]}
    return Inventory(names, peer, up, len(doc["switches"]), len(doc["cas"]), float(doc["rate_Gbps"]), doc["width"])


def infer_inventory(snap: ibparse.Snapshot) -> Inventory:
    """An inventory from the fabric's own output, for a fabric without fabric.yaml: the expected width and rate
    are the most common ones among its active InfiniBand ports and links (an HDR fabric expects HDR). Switch
    counts, cabling and uplinks stay unknown, so the rules that need them are skipped."""
    ports = [p for p in snap.ib_ports if p.state == "Active"]
    links = [ln for ln in snap.links if ln.state == "Active" and ln.rate_Gbps]
    rate = _majority([p.rate_Gbps for p in ports] + [ln.rate_Gbps for ln in links]) or 0.0
    width = _majority([p.width for p in ports] + [ln.width for ln in links]) or "4X"
    return Inventory({}, {}, {}, 0, 0, float(rate), width)


def _name(inv: Inventory, lid: int, port: int) -> str:
    return f"{inv.names.get(lid, f'lid {lid}')}/P{port}"


def _majority(values):
    vals = [v for v in values if v not in ("", 0, None)]
    return Tally(vals).most_common(1)[0][0] if vals else None


def _conflict(s, inv):
    out = []
    if s.diagnet:
        for stage, _, txt in s.diagnet.issues("E"):
            if "Duplicated" in txt or "master SM" in txt:
                out.append(Finding("config_conflict", stage, txt))
        if len(s.diagnet.master_sms) > 1:
            out.append(Finding("config_conflict", "Subnet Manager", f"{len(s.diagnet.master_sms)} master SMs: " +
                               "; ".join(re.sub(r".*Node_Description=", "", m) for m in s.diagnet.master_sms)))
    masters = {m.sm_guid: m for m in s.sms if m.state == "SMINFO_MASTER"}
    if len(masters) > 1:
        out.append(Finding("config_conflict", "Subnet Manager", f"sminfo reports {len(masters)} different master "
                           "SMs: " + "; ".join(f"lid {m.sm_lid} guid {m.sm_guid} (seen from {m.host})"
                                              for m in masters.values())))
    active = [p for p in s.ib_ports if p.state == "Active"]
    sms = {}
    for p in active:
        sms.setdefault(p.sm_lid, []).append(f"{p.host}/{p.ca}")
    if len(sms) > 1:
        out.append(Finding("config_conflict", "hosts", "ports disagree on the SM: " +
                           "; ".join(f"SM lid {k} seen by {', '.join(v)}" for k, v in sorted(sms.items()))))
    for lid, n in Tally(p.base_lid for p in active).items():
        if n > 1:
            who = [f"{p.host}/{p.ca}" for p in active if p.base_lid == lid]
            out.append(Finding("config_conflict", f"LID {lid}", f"LID {lid} assigned to {n} ports: {', '.join(who)}"))
    return out


def _unauthorized(s, inv):
    out = []
    for c in s.counters:
        n = c.get("PortRcvConstraintErrors") + c.get("PortXmitConstraintErrors")
        if n:
            sat = [k for k in c.saturated() if "Constraint" in k]
            out.append(Finding("unauthorized_access", _name(inv, c.lid, c.port),
                               f"{'at least ' if sat else ''}{n} packets dropped by partition (P_Key) enforcement"
                               + (f" ({', '.join(sat)} saturated: an 8-bit counter stops at 255)" if sat else "")))
    for stage, _, txt in (s.diagnet.issues() if s.diagnet else []):
        if re.search(r"SM_Key|M_Key|P_Key|not in the topology", txt):
            out.append(Finding("unauthorized_access", stage, txt))
    return out


def _down_ports(s):
    return [p for p in s.ib_ports if p.state in DOWN_STATES or p.physical_state in ("Polling", "Disabled")]


def _switch_failure(s, inv):
    by_leaf = {}
    for p in _down_ports(s):
        if p.physical_state != "LinkUp" and (p.host, p.ca) in inv.peer_leaf:
            by_leaf.setdefault(inv.peer_leaf[(p.host, p.ca)][0], []).append(f"{p.host}/{p.ca}")
    out = []
    for leaf, ports in by_leaf.items():
        if len(ports) >= 2:
            ev = f"{len(ports)} HCA ports cabled to {leaf} are down together: {', '.join(ports)}"
            lids = [lid for lid, n in inv.names.items() if n == leaf]
            if any(c.lid in lids and "unreachable" in c.values for c in s.counters):
                ev += f"; {leaf} does not answer perfquery"
            out.append(Finding("switch_failure", leaf, ev))
    if inv.switches and s.diagnet and s.diagnet.summary.get("IB Switches", inv.switches) < inv.switches:
        out.append(Finding("switch_failure", "fabric", f"ibdiagnet discovered {s.diagnet.summary['IB Switches']} "
                                                       f"of the inventory's {inv.switches} switches"))
    return out


def _link_down(s, inv):
    explained = {p for f in _switch_failure(s, inv) if f.component != "fabric"
                 for p in re.findall(r"(\w+/mlx5_\d+)", f.evidence)}
    out = []
    for p in _down_ports(s):
        if f"{p.host}/{p.ca}" in explained:
            continue
        why = ("no signal from the other end (cable, transceiver or switch port)" if p.physical_state == "Polling"
               else "port administratively disabled" if p.physical_state == "Disabled"
               else "link is up but no subnet manager configured the port" if p.state == "Initializing"
               else f"state {p.state}")
        peer = inv.peer_leaf.get((p.host, p.ca))
        out.append(Finding("link_down", f"{p.host}/{p.ca}" + (f" ↔ {peer[0]}/P{peer[1]}" if peer else ""),
                           f"State {p.state}, physical state {p.physical_state}: {why}"))
    for c in s.counters:
        n = c.get("LinkDownedCounter")
        if n and (c.lid, c.port) not in inv.uplinks:
            out.append(Finding("link_down", _name(inv, c.lid, c.port),
                               f"LinkDownedCounter {n}{'+' if 'LinkDownedCounter' in c.saturated() else ''}: the "
                               "link went down and retrained that often since the counters were reset (a flapping "
                               "cable, transceiver or port), although it may be up now"))
    for ln in s.links:
        if ln.physical_state == "LinkUp" and ln.state != "Active":
            out.append(Finding("link_down", f"{ln.node}/P{ln.port}", f"iblinkinfo: {ln.state}/{ln.physical_state}: "
                               "the link is up but no subnet manager configured it"))
    return out


def _multipath(s, inv):
    out = []
    for c in s.counters:
        if (c.lid, c.port) in inv.uplinks and c.get("LinkDownedCounter") > 0:
            siblings = [k for k in inv.uplinks if k[0] == c.lid]
            clean = sum(1 for x in s.counters if (x.lid, x.port) in siblings and x.get("LinkDownedCounter") == 0)
            out.append(Finding("multipath_unstable", inv.uplinks[(c.lid, c.port)],
                               f"LinkDownedCounter {c.get('LinkDownedCounter')}, PortXmitDiscards "
                               f"{c.get('PortXmitDiscards')} on 1 of {len(siblings)} parallel uplinks "
                               f"({clean} others clean)"))
    lids = {n: lid for lid, n in inv.names.items()}
    for stage, _, txt in (s.diagnet.issues() if s.diagnet else []):
        m = re.match(r'(\S+)/P(\d+) - "(link_downed_counter|port_xmit_discards)" increased', txt)
        if m and (lids.get(m.group(1)), int(m.group(2))) in inv.uplinks:
            out.append(Finding("multipath_unstable", stage, txt))
    return out


_LOSS = ("SymbolErrorCounter", "PortRcvErrors", "LinkErrorRecoveryCounter", "LocalLinkIntegrityErrors",
         "PortRcvRemotePhysicalErrors")


def _packet_loss(s, inv):
    flapping = {(c.lid, c.port) for c in s.counters if (c.lid, c.port) in inv.uplinks and c.get("LinkDownedCounter")}
    out = []
    for c in s.counters:
        bad = {k: c.get(k) for k in _LOSS if c.get(k) > (10 if k == "SymbolErrorCounter" else 0)}
        if bad and (c.lid, c.port) not in flapping:
            out.append(Finding("packet_loss", _name(inv, c.lid, c.port),
                               ", ".join(f"{k} {v}" for k, v in bad.items()) +
                               f"; LinkDownedCounter {c.get('LinkDownedCounter')} (the link stays up)"))
    for c in s.counters:
        d = c.get("PortXmitDiscards")
        if d and (c.lid, c.port) not in flapping:
            out.append(Finding("packet_loss", _name(inv, c.lid, c.port), f"PortXmitDiscards {d}: the port dropped "
                               "packets it could not send (congestion towards a slow or down path, or a link that "
                               "went down under traffic)"))
    for stage, _, txt in (s.diagnet.issues("E") if s.diagnet else []):
        if re.search(r'"(symbol_error_counter|port_rcv_errors|link_error_recovery_counter)" increased', txt):
            out.append(Finding("packet_loss", stage, txt))
    return out


def _fleet_type(s):
    return _majority(p.ca_type for p in s.ib_ports)


def _low_bandwidth(s, inv):
    fleet = _fleet_type(s)
    out = []
    for p in s.ib_ports:
        if p.state != "Active" or (p.ca_type and fleet and p.ca_type != fleet):
            continue
        if (p.width and p.width != inv.width) or (p.rate_Gbps and inv.rate_Gbps and p.rate_Gbps < inv.rate_Gbps):
            out.append(Finding("low_bandwidth", f"{p.host}/{p.ca}", f"active {p.width or '?'} {p.speed or ''} = "
                               f"{p.rate_Gbps:g} Gb/s, expected {inv.width} at {inv.rate_Gbps:g} Gb/s"))
    for stage, _, txt in (s.diagnet.issues() if s.diagnet else []):
        if re.search(r"Unexpected (actual link )?(width|speed)|Unexpected actual link", txt):
            out.append(Finding("low_bandwidth", stage, txt))
    for ln in s.links:
        if ln.state == "Active" and ln.rate_Gbps and inv.rate_Gbps and (
                ln.rate_Gbps < inv.rate_Gbps or (inv.width and ln.width != inv.width)):
            out.append(Finding("low_bandwidth", f"{ln.node}/P{ln.port} → {ln.peer}", f"iblinkinfo: {ln.width} "
                               f"{ln.lane_Gbps:g} Gbps per lane = {ln.rate_Gbps:g} Gb/s, the fabric runs "
                               f"{inv.width} at {inv.rate_Gbps:g} Gb/s"))
    return out


def _mismatch(s, inv):
    out = []
    active = [p for p in s.ib_ports if p.state == "Active"]
    for field, label in (("firmware", "firmware"), ("active_mtu", "active MTU"), ("ca_type", "HCA model"),
                         ("link_layer", "link layer")):
        common = _majority(getattr(p, field) for p in active)
        for p in active:
            v = getattr(p, field)
            if common is not None and v not in ("", 0) and v != common:
                extra = f" (rate {p.rate_Gbps:g} vs {inv.rate_Gbps:g} Gb/s)" if field == "ca_type" else ""
                out.append(Finding("config_mismatch", f"{p.host}/{p.ca}", f"{label} {v}, the others {common}{extra}"))
    for stage, _, txt in (s.diagnet.issues() if s.diagnet else []):
        if "wrong FW version" in txt:
            out.append(Finding("config_mismatch", stage, txt))
    return out


RULES = (_conflict, _unauthorized, _switch_failure, _link_down, _multipath, _packet_loss, _low_bandwidth, _mismatch)


def diagnose(snap: ibparse.Snapshot, inventory: Inventory | None = None) -> list[Finding]:
    """Every finding, most severe fault first. Without ``inventory`` the book's sample fabric is used for the
    book's samples and, for any other snapshot, one inferred from the snapshot itself (:func:`infer_inventory`)."""
    inv = inventory or (load_inventory() if snap.source.startswith("sample:") else infer_inventory(snap))
    found = [f for rule in RULES for f in rule(snap, inv)]
    return sorted(found, key=lambda f: ORDER.index(f.fault))


def primary(findings: list[Finding]) -> str:
    """The fault to fix first, or "healthy"."""
    return findings[0].fault if findings else "healthy"


def report(findings: list[Finding]) -> str:
    """A readable diagnosis: the primary fault, its evidence, and what to do."""
    if not findings:
        return "healthy: every port Active at full width and speed, no error counters, one master SM"
    lines = []
    for fault in dict.fromkeys(f.fault for f in findings):
        title, zh, fix = FAULTS[fault]
        lines.append(f"{title} ({zh}) [{fault}]")
        lines += [f"  - {f.component}: {f.evidence}" for f in findings if f.fault == fault]
        lines.append(f"  fix: {fix}")
    return "\n".join(lines)


COUNTER_COLUMNS = ("SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
                   "PortXmitDiscards", "PortRcvConstraintErrors", "PortXmitWait")


def counter_table(snap: ibparse.Snapshot, lids=None, inventory: Inventory | None = None) -> list[dict]:
    """perfquery counters as rows named by the inventory (``lids``: only those nodes)."""
    inv = inventory or load_inventory()
    return [{"port": _name(inv, c.lid, c.port), "lid": c.lid, **{k: c.get(k) for k in COUNTER_COLUMNS},
             "answered": "unreachable" not in c.values} for c in snap.counters if lids is None or c.lid in lids]


def excerpt(scenario: str, tool: str, pattern: str, before: int = 0) -> str:
    """The lines of a shipped sample that match ``pattern`` (regex), with ``before`` lines of context."""
    lines = ibparse.sample_text(scenario, tool).splitlines()
    keep = set()
    for i, ln in enumerate(lines):
        if not ln.startswith("#") and re.search(pattern, ln):
            keep.update(range(max(0, i - before), i + 1))
    if not keep:
        raise ValueError(f"no line of {scenario}.{tool} matches {pattern!r}")
    return "\n".join(lines[i] for i in sorted(keep))


def main(argv=None) -> int:
    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers ibdiag", description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--sample", help=f"one shipped scenario: {', '.join(ibparse.scenarios())}")
    g.add_argument("--live", action="store_true", help="run the IB tools installed on this host")
    ap.add_argument("--inventory", help="fabric.yaml of your fabric (default: the book's sample fabric for the "
                                        "samples, and for --live one inferred from the fabric's own ports)")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    inv = load_inventory(a.inventory) if a.inventory else None
    if a.live:
        snap, why = ibparse.capture_live()
        if snap is None:
            print(f"no live diagnosis: {why}", file=sys.stderr)
            return 2
        snaps = [snap]
    else:
        snaps = [ibparse.load_sample(n) for n in ([a.sample] if a.sample else ibparse.scenarios())]
    recs = []
    for snap in snaps:
        fs = diagnose(snap, inv)
        recs.append({"source": snap.source, "tools": " ".join(snap.tools), "diagnosis": primary(fs),
                     "findings": len(fs), "first_evidence": fs[0].evidence if fs else ""})
        if not a.json and len(snaps) == 1:
            print(report(fs))
    results.emit(recs, "ib_diagnosis", a, columns=["source", "diagnosis", "findings", "tools"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
