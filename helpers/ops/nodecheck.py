"""Triage a GPU node from the outputs its own tools print: ``python -m helpers nodecheck FILE|DIR…`` detects each
file's format by its content, reads it, and says per component (BMC sensors, PSUs, fans, GPUs, NVLink, PCIe, Xid
history, Slurm node, Kubernetes node) what is healthy, degraded or failed, and why (chapters 12, 13 and 27).

The readers live with their formats (:mod:`helpers.ops.bmc`, :mod:`helpers.ops.dcgmread`, :mod:`helpers.ops.slurmread`,
:mod:`helpers.ops.slurmjson`, :mod:`helpers.ops.nvlinkread`, :mod:`helpers.ops.pcinode`, :mod:`helpers.ops.k8snode`,
:mod:`helpers.ops.logs`, :mod:`helpers.core.smiparse`, :mod:`helpers.ops.redfishsensors` for Redfish
``Sensor``/``Fan``/``PowerSupply``); the rules that turn what they read into findings are in
:mod:`helpers.ops.noderules` and :mod:`helpers.ops.noderules_ext`. This module detects and reports.

    python -m helpers nodecheck tests/data/real/dcgmi-diag tests/data/real/sinfo
    python -m helpers nodecheck node42/ --json          # exit 0 healthy, 1 degraded/failed found, 2 bad input
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from helpers.ops import noderules, noderules_ext

FORMATS = ("redfish-thermal", "redfish-power", "redfish-system", "redfish-processor", "ipmitool-sel", "ipmitool-sdr",
           "dcgmi-diag", "nvlink-status", "dcgm-exporter", "nvidia-smi-q", "scontrol-node", "sinfo", "squeue", "sshare",
           "lspci", "kubectl-describe-node", "dmesg-xid", "ipmitool-sensor") + noderules_ext.FORMATS


def detect(text: str) -> str | None:
    """The format of one tool output, from its content (None when none of :data:`FORMATS` fits)."""
    s = text.lstrip()
    if s.startswith("{"):
        try:
            doc = json.loads(s)
        except ValueError:
            return None
        from helpers.ops import redfishsensors
        from helpers.ops.redfishread import kind

        if isinstance(doc, dict) and any(isinstance(doc.get(k), list) for k in ("nodes", "sinfo", "jobs")) and \
                ("meta" in doc or "errors" in doc):
            return "slurm-json"
        if re.search(r'"nvidia\.com/gpu\.(product|count)"\s*:', text):
            return "gfd-labels"
        k = (kind(doc) or redfishsensors.kind(doc)) if isinstance(doc, dict) else None
        return f"redfish-{k}" if k else None
    m = lambda pat: re.search(pat, text, re.M) is not None  # noqa: E731
    if m(r'^\s*"nvidia\.com/gpu\.(product|count)"\s*:\s*"'):
        return "gfd-labels"
    if m(r"^\s*Link [0-9]+: [A-Za-z ]*(Errors|errors|events): ([0-9]+|N/A)\s*$"):
        return "nvlink-errors"
    if m(r"^\|?\s*NvLink Link Status\s*\|?$") or m(r"^\s*gpuId [0-9]+:\s*$"):
        return "dcgmi-nvlink"
    if m(r"^\s*[0-9]+ GPUs? found") or m(r"^\s*\|\s*GPU ID\s*\|\s*Device Information"):
        return "dcgmi-discovery"
    if m(r"^\s*[0-9a-fA-F]+\s*\|\s*([0-9][0-9]/[0-9][0-9]/[0-9]{4}|Pre-Init)\s*\|"):
        return "ipmitool-sel"
    if m(r"^Sensor ID\s+:") or m(r"^[^|\n]+\|[^|\n]+\|\s*(ok|ns|nc|cr|nr|lnc|unc|lcr|ucr|lnr|unr)\s*$") or \
            m(r"^[^|\n]+\|\s*[0-9A-Fa-f]{2}h\s*\|\s*(ok|ns|nc|cr|nr)\s*\|"):
        return "ipmitool-sdr"
    if m(r"^\|\s*(Diagnostic|DCGM Version)\s+\|"):
        return "dcgmi-diag"
    if m(r"^\s*Link [0-9]+: (?:[0-9.]+ GB/s|<inactive>)") or "Unable to retrieve NVLink information" in text:
        return "nvlink-status"
    if m(r"^DCGM_\w+(\{| )") or m(r"^# TYPE DCGM_"):
        return "dcgm-exporter"
    if "NVSMI LOG" in text:
        return "nvidia-smi-q"
    if m(r"^\s*NodeName=\S+") and "State=" in text:
        return "scontrol-node"
    if m(r"^\s*(PARTITION\s+AVAIL|REASON\s+USER\s+TIMESTAMP|NODELIST\s+NODES\s+PARTITION)"):
        return "sinfo"
    if m(r"^\s*(JOBID|JOBID_RAW)\s+\S+"):
        return "squeue"
    if m(r"^\s*Account\s+User\s+.*FairShare"):
        return "sshare"
    if m(r"^\s*Lnk(Cap|Sta):") or m(r"^(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}\.[0-7] [^:]+: "):
        return "lspci"
    if m(r"^(Taints|Conditions|Capacity|Allocatable):") or m(r"^\s+(Ready|MemoryPressure)\s+(True|False|Unknown)\s"):
        return "kubectl-describe-node"
    if "NVRM: Xid" in text or "fallen off the bus" in text:
        return "dmesg-xid"
    if any(ln.count("|") == 9 for ln in text.splitlines()):
        return "ipmitool-sensor"
    return None


def read_path(path: Path) -> list:
    """Findings for one file. Raises ValueError naming the file when its format is unknown or unreadable."""
    from helpers.core import inputs

    try:
        text = inputs.read_text(path, what="node tool output")
    except OSError as e:
        raise ValueError(f"{path}: cannot read ({e.strerror})") from None
    fmt = detect(text)
    if fmt is None:
        raise ValueError(f"{path}: unknown format; nodecheck reads {', '.join(FORMATS)}")
    try:
        if fmt in noderules_ext.FORMATS:
            return noderules_ext.findings(fmt, text, str(path))
        return noderules.findings(fmt, text, str(path))
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path}: looks like {fmt} but cannot be read: {e}") from None


MAX_FILES = 10_000          # a node's collected outputs are dozens of files; more means the wrong folder


def _files(p: Path) -> list[Path]:
    """The regular files under ``p`` (FIFOs and devices skipped), refused past MAX_FILES or an unreadable entry."""
    out = []
    try:
        for f in p.rglob("*"):
            if f.is_file() and f.name not in ("SOURCES.md", "README.md"):
                out.append(f)
            if len(out) > MAX_FILES:
                raise ValueError(f"{p}: holds more than {MAX_FILES} files; point nodecheck at the outputs "
                                 "collected from one node")
    except OSError as e:
        raise ValueError(f"{p}: cannot list {e.filename or p} ({e.strerror}); point nodecheck at the outputs "
                         "collected from the node") from None
    return sorted(out)


def expand(paths: list[str]) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            files = _files(p)
            if not files:           # an empty folder is a wrong path, not a healthy node
                raise ValueError(f"{p}: the folder holds no files; point nodecheck at the outputs collected from the node")
            out += files
        elif p.exists():
            out.append(p)
        else:
            raise ValueError(f"{p}: no such file or folder")
    return out


def verdicts(findings: list) -> dict:
    """{component: worst status} over every finding."""
    out: dict = {}
    for f in findings:
        out[f.component] = max(out.get(f.component, "healthy"), f.status, key=noderules.RANK.get)
    return out


def report(findings: list) -> str:
    lines = []
    for comp, status in verdicts(findings).items():
        lines.append(f"{comp}: {status}")
        lines += [f"  - {f.status:8s} {f.item}: {f.why}  [{Path(f.source).name}]"
                  for f in findings if f.component == comp and (f.status != "healthy" or status == "healthy")]
    return "\n".join(lines) if lines else "no findings"


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers nodecheck", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", type=cli.nonempty_path, help="tool outputs (files or folders) collected from one node")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    try:
        found = [f for p in expand(a.paths) for f in read_path(p)]
    except ValueError as e:
        print(f"nodecheck: {e}", file=sys.stderr)
        return 2
    if a.json or a.out:
        results.emit(found, "node_check", a, columns=["component", "status", "item", "why"],
                     verdicts=verdicts(found))
    if not a.json:
        print(report(found))
    return 0 if all(f.status == "healthy" for f in found) else 1


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
