"""Diagnose an InfiniBand fabric from ibstat / ibstatus / ibv_devinfo / perfquery / ibdiagnet output (chapter 03).

The eight faults of the book's troubleshooting lab (from the course outline's 故障检测与诊断 cases), each with a
rule (:mod:`helpers.network.ibrules`) that reads the parsed tools (:mod:`helpers.network.ibparse`) and the fabric's
inventory (:mod:`helpers.network.ibinventory`, ``data/ib/fabric.yaml``: switches, LIDs, which leaf port every HCA
is cabled to, the parallel uplinks), and the fix an engineer applies (``data/ib/faults.yaml``). This module runs
the rules, names the primary fault, writes the report and the counter tables the chapter shows, and is the CLI.

    python -m helpers ibdiag                     # every shipped scenario: the fault each sample shows
    python -m helpers ibdiag --sample packet_loss
    python -m helpers ibdiag --live --json       # run the tools on this host (when installed) and diagnose

Rules are checked in order of severity; the first fault found is the primary one, "healthy" when none fires.
"""
from __future__ import annotations

import argparse
import re
import sys

from helpers.network import ibparse
from helpers.network.ibinventory import Inventory, infer_inventory, load_inventory, port_name
from helpers.network.ibrules import RULES, Finding


def _faults() -> dict:
    """fault -> (title, 中文, fix) from data/ib/faults.yaml, in order of severity."""
    import yaml

    rows = yaml.safe_load((ibparse.DATA / "faults.yaml").read_text())
    return {r["fault"]: (r["title"], r["zh"], r["fix"]) for r in rows}


FAULTS = _faults()
ORDER = tuple(FAULTS)


def diagnose(snap: ibparse.Snapshot, inventory: Inventory | None = None) -> list[Finding]:
    """Every finding, most severe fault first. Without ``inventory`` the book's sample fabric is used for the
    book's samples and, for any other snapshot, one inferred from the snapshot itself
    (:func:`helpers.network.ibinventory.infer_inventory`)."""
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
    return [{"port": port_name(inv, c.lid, c.port), "lid": c.lid, **{k: c.get(k) for k in COUNTER_COLUMNS},
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
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers ibdiag", description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--sample", type=cli.name_of(ibparse.scenarios()),
                   help=f"one shipped scenario: {', '.join(ibparse.scenarios())}")
    g.add_argument("--live", action="store_true", help="run the IB tools installed on this host")
    ap.add_argument("--inventory", type=cli.nonempty_path, help="fabric.yaml of your fabric (default: the book's sample fabric for the "
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
