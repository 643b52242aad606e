"""The eight fault rules of the InfiniBand troubleshooting lab, one function per fault (chapter 03).

Each rule reads a parsed snapshot of the tools (:mod:`helpers.network.ibparse`: ibstat, ibstatus, ibv_devinfo,
perfquery, iblinkinfo, sminfo, ibdiagnet) against the fabric's :class:`~helpers.network.ibinventory.Inventory` and
returns a :class:`Finding` for every piece of evidence of its fault: a configuration conflict (two master SMs,
duplicated LIDs), unauthorized access (P_Key drops), a failed switch, a link down, an unstable multipath uplink,
packet loss, low bandwidth and a configuration mismatch. :data:`RULES` lists them;
:func:`helpers.network.ibdiag.diagnose` runs them all and orders the findings by severity.
"""
from __future__ import annotations

import re
from collections import Counter as Tally
from dataclasses import dataclass

from helpers.network.ibinventory import majority, port_name

DOWN_STATES = ("Down", "Initializing")


@dataclass(frozen=True)
class Finding:
    fault: str
    component: str
    evidence: str


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
            out.append(Finding("unauthorized_access", port_name(inv, c.lid, c.port),
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
                 for p in re.findall(r"(\w+/mlx5_[0-9]+)", f.evidence)}
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
            out.append(Finding("link_down", port_name(inv, c.lid, c.port),
                               f"LinkDownedCounter {n}{'+' if 'LinkDownedCounter' in c.saturated() else ''}: the "
                               "link went down and retrained that often since the counters were reset (a flapping "
                               "cable, transceiver or port), although it may be up now"))
    lid_of = {name: lid for lid, name in inv.names.items()}
    cabled = set(inv.uplinks) | {(lid_of.get(leaf), port) for leaf, port in inv.peer_leaf.values()}
    for ln in s.links:
        if ln.physical_state == "LinkUp" and ln.state != "Active":
            out.append(Finding("link_down", f"{ln.node}/P{ln.port}", f"iblinkinfo: {ln.state}/{ln.physical_state}: "
                               "the link is up but no subnet manager configured it"))
        elif (ln.state == "Down" or ln.physical_state in ("Polling", "Disabled")) and (
                (ln.lid, ln.port) in cabled or ln.peer):
            # a switch's unused ports are always Down/Polling; one the inventory says is cabled is a dead link
            out.append(Finding("link_down", inv.uplinks.get((ln.lid, ln.port), f"{ln.node}/P{ln.port}"),
                               f"iblinkinfo: {ln.state}/{ln.physical_state} on a port the inventory says is cabled: "
                               + ("no signal from the other end (cable, transceiver or the far port)"
                                  if ln.physical_state == "Polling" else "the port is down")))
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
        m = re.match(r'(\S+)/P([0-9]+) - "(link_downed_counter|port_xmit_discards)" increased', txt)
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
            out.append(Finding("packet_loss", port_name(inv, c.lid, c.port),
                               ", ".join(f"{k} {v}" for k, v in bad.items()) +
                               f"; LinkDownedCounter {c.get('LinkDownedCounter')} (the link stays up)"))
    for c in s.counters:
        d = c.get("PortXmitDiscards")
        if d and (c.lid, c.port) not in flapping:
            out.append(Finding("packet_loss", port_name(inv, c.lid, c.port), f"PortXmitDiscards {d}: the port dropped "
                               "packets it could not send (congestion towards a slow or down path, or a link that "
                               "went down under traffic)"))
    for stage, _, txt in (s.diagnet.issues("E") if s.diagnet else []):
        if re.search(r'"(symbol_error_counter|port_rcv_errors|link_error_recovery_counter)" increased', txt):
            out.append(Finding("packet_loss", stage, txt))
    return out


def _fleet_type(s):
    return majority(p.ca_type for p in s.ib_ports)


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
        common = majority(getattr(p, field) for p in active)
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
