"""Readers for Slurm's views of nodes and queues: ``sinfo`` (default, ``-R``, ``-N -l``), ``scontrol show node``,
``squeue`` (default and ``-o`` formats) and ``sshare``, with node state flags judged the way an operator reads them
(chapters 13 and 27). ``sacct`` is read by :func:`helpers.ops.slurmtext.parse_sacct`.

    from helpers.ops import slurmread
    slurmread.parse_sinfo(text)          # (SinfoRow(partition, state, nodes, nodelist, reason), …)
    slurmread.parse_scontrol_node(text)  # (SlurmNode(name, state, reason, gpus_cfg, fields), …)
    slurmread.judge_state("IDLE+DRAIN")  # ("degraded", "drained: no new jobs")
    slurmread.parse_squeue(text)         # (QueuedJob(job_id, state, …, reason), …)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# sinfo's short state names and scontrol's long ones → (verdict, meaning)
_BAD = {"down": ("failed", "down"), "fail": ("failed", "failed"), "failing": ("failed", "failing"),
        "not_responding": ("failed", "slurmd not responding"), "err": ("failed", "error"), "error": ("failed", "error"),
        "drain": ("degraded", "drained: no new jobs"), "drained": ("degraded", "drained: no new jobs"),
        "drng": ("degraded", "draining: no new jobs"), "draining": ("degraded", "draining: no new jobs"),
        "maint": ("degraded", "in a maintenance reservation"), "reboot": ("degraded", "reboot pending"),
        "reboot_requested": ("degraded", "reboot pending"), "inval": ("failed", "invalid configuration"),
        "invalid_reg": ("failed", "registered with less than configured"), "unk": ("degraded", "state unknown"),
        "unknown": ("degraded", "state unknown"), "maintenance": ("degraded", "in a maintenance reservation")}
_SUFFIX = {"*": ("failed", "slurmd not responding"), "$": ("degraded", "in a maintenance reservation"),
           "@": ("degraded", "reboot pending"), "!": ("degraded", "power down pending"),
           "~": ("healthy", "powered down (power saving)"), "#": ("healthy", "powering up"),
           "%": ("healthy", "powering down"), "^": ("degraded", "reboot issued"),
           "-": ("healthy", "planned by the backfill scheduler")}
_RANK = {"healthy": 0, "degraded": 1, "failed": 2}


def judge_state(state: str) -> tuple[str, str]:
    """The verdict for one node state as sinfo (``drng@``) or scontrol (``IDLE+DRAIN``, ``DOWN*+DRAIN``) prints it."""
    worst, why = "healthy", []
    for part in state.lower().split("+"):
        base = part.rstrip("*$@!~#%^-")
        for flag in part[len(base):]:
            v, w = _SUFFIX[flag]
            why.append(w)
            worst = max(worst, v, key=_RANK.get)
        if base in _BAD:
            v, w = _BAD[base]
            why.append(w)
            worst = max(worst, v, key=_RANK.get)
    return worst, "; ".join(dict.fromkeys(why)) or state.lower()


@dataclass(frozen=True)
class SinfoRow:
    partition: str               # "" for sinfo -R
    state: str                   # as printed ("drng@", "idle"); "" for sinfo -R
    nodes: int | None
    nodelist: str
    reason: str                  # sinfo -R / -N -l REASON column, else ""
    user: str = ""               # sinfo -R: who set the reason ("root"; -l prints "root(0)")
    timestamp: str = ""          # sinfo -R: when it was set (2024-09-02T11:40:07)


def judge_reason(reason: str) -> tuple[str, str]:
    """The verdict for a ``sinfo -R`` row printed without a STATE column: every listed node is down, drained or
    failing; "Not responding" is the reason slurmctld itself sets when it marks a node DOWN (``sinfo -R -l`` of
    tests/data/real/sinfo/unige-3629… prints it beside ``down*``), so that one is failed, any other degraded."""
    if reason.lower().startswith("not responding"):
        return "failed", f"reason: {reason} (slurmctld marks such a node DOWN)"
    return "degraded", f"reason: {reason} (drained or down; run sinfo -R -l for the state)"


def parse_sinfo(text: str) -> tuple:
    """``sinfo`` default (PARTITION AVAIL TIMELIMIT NODES STATE NODELIST), ``sinfo -R`` (REASON USER TIMESTAMP
    NODELIST; ``-R -l`` adds STATE before NODELIST and prints the user as ``root(0)``) and ``sinfo -N -l``
    (NODELIST NODES PARTITION STATE … REASON). A ``-l`` listing's date line above the header is skipped."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    hi = next((i for i, ln in enumerate(lines) if re.match(r"^\s*(PARTITION|REASON|NODELIST)\s", ln)), None)
    if hi is None:
        raise ValueError("sinfo: no header line (PARTITION …, REASON USER TIMESTAMP NODELIST or NODELIST NODES …)")
    head = lines[hi].split()
    out = []
    for ln in lines[hi + 1:]:
        t = ln.split()
        if head[0] == "REASON":                        # the reason may contain spaces: the columns after it are fixed
            n = len(head) - 1
            if len(t) <= n:
                raise ValueError(f"sinfo -R: row {ln!r} has {len(t)} fields, the header {' '.join(head)} needs more")
            row = dict(zip(head[1:], t[-n:]))
            out.append(SinfoRow("", row.get("STATE", ""), None, row["NODELIST"], " ".join(t[:-n]),
                                row.get("USER", ""), row.get("TIMESTAMP", "")))
            continue
        row = dict(zip(head, t))
        if "REASON" in head:
            row["REASON"] = " ".join(t[len(head) - 1:])
        out.append(SinfoRow(row.get("PARTITION", "").rstrip("*"), row.get("STATE", ""),
                            int(row["NODES"]) if row.get("NODES", "").isascii() and row["NODES"].isdigit() else None,
                            row.get("NODELIST", ""), row.get("REASON", "") if row.get("REASON") != "none" else ""))
    return tuple(out)


@dataclass(frozen=True)
class SlurmNode:
    name: str
    state: str                   # "IDLE+DRAIN"
    reason: str                  # "health_ps___blocked [root@2026-04-29T03:06:18]" or ""
    gpus_cfg: int                # gres/gpu in CfgTRES, else the GPUs Gres= declares (clusters that do not track
                                 # gres/gpu as a TRES print none in CfgTRES)
    gpus_alloc: int              # gres/gpu in AllocTRES
    fields: tuple                # every (key, value) as printed


_KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z_][A-Za-z0-9_:/]*)=")


def _tres_gpus(tres: str) -> int:
    m = re.search(r"(?:^|,)gres/gpu=([0-9]+)", tres or "")
    return int(m.group(1)) if m else 0


def gres_gpus(gres: str) -> int:
    """GPUs a ``Gres=`` value declares: ``gpu:4``, ``gpu:a100:4(S:0-1)``, ``gpu:1080:7,gpu:block:1`` (→ 8)."""
    return sum(int(m.group(1)) for m in re.finditer(r"(?:^|,)gpu(?::[^:,()]+)?:([0-9]+)(?=[(,]|$)", gres or ""))


def parse_scontrol_node(text: str) -> tuple:
    """``scontrol show node`` (one or many nodes, indented or flat, or one line per node with ``-o``); values with
    spaces (OS=, Reason=) are kept."""
    blocks = re.split(r"(?m)^(?=\s*NodeName=)", text)
    out = []
    for b in blocks:
        if "NodeName=" not in b:
            continue
        fields = []
        for line in b.splitlines():
            keys = list(_KEY.finditer(line))
            if line.strip().startswith(("Reason=", "OS=", "Comment=", "Extra=")):
                k, _, v = line.strip().partition("=")
                fields.append((k, v.strip()))
                continue
            for i, m in enumerate(keys):
                end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
                fields.append((m.group(1), line[m.end():end].strip()))
        f = dict(fields)
        cfg = _tres_gpus(f.get("CfgTRES", "")) or gres_gpus(f.get("Gres", ""))
        out.append(SlurmNode(f.get("NodeName", "?"), f.get("State", ""), f.get("Reason", ""),
                             cfg, _tres_gpus(f.get("AllocTRES", "")), tuple(fields)))
    if not out:
        raise ValueError("scontrol show node: no 'NodeName=' record")
    return tuple(out)


@dataclass(frozen=True)
class QueuedJob:
    job_id: str
    state: str                   # R / PD / CG … or RUNNING / PENDING (``-o %T``)
    partition: str
    user: str
    nodes: int | None
    nodelist: str                # where it runs, "" while pending
    reason: str                  # "(Resources)" → "Resources"; "" when running
    fields: tuple                # every (column, value) as printed


def parse_squeue(text: str) -> tuple:
    """``squeue`` default columns or any ``-o`` format whose values have no spaces (JOBID … NODELIST(REASON))."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    hi = next((i for i, ln in enumerate(lines) if ln.split() and ln.split()[0] in ("JOBID", "JOBID_RAW")), None)
    if hi is None:
        raise ValueError("squeue: no header line starting with JOBID")
    head, out = lines[hi].split(), []
    for ln in lines[hi + 1:]:
        t = ln.split()
        if len(t) > len(head) and head[-1] == "NODELIST(REASON)":        # a reason with spaces: "(launch failed …)"
            t = t[:len(head) - 1] + [" ".join(t[len(head) - 1:])]
        f = dict(zip(head, t))
        where = f.get("NODELIST(REASON)", f.get("NODELIST", ""))
        reason = where[1:-1] if where.startswith("(") else f.get("REASON", "")
        nodes = f.get("NODES", "")
        out.append(QueuedJob(f.get("JOBID", f.get("JOBID_RAW", "")), f.get("ST", f.get("STATE", "")),
                             f.get("PARTITION", ""), f.get("USER", ""), int(nodes) if nodes.isascii() and nodes.isdigit() else None,
                             "" if where.startswith("(") else where, reason, tuple(f.items())))
    return tuple(out)


def parse_sshare(text: str) -> tuple:
    """``sshare`` / ``sshare -a``: one tuple of (column, value) per row, cut at the dashes line's column spans
    (values may be empty: the root account has no User and no Raw Shares)."""
    lines = text.splitlines()
    di = next((i for i, ln in enumerate(lines) if ln.strip() and set(ln.strip()) <= {"-", " "}), None)
    if di is None or di == 0:
        raise ValueError("sshare: no header and dashes line (Account User Raw Shares … FairShare)")
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[di])]
    head = [lines[di - 1][a:b].strip() for a, b in spans]
    rows = []
    for ln in lines[di + 1:]:
        if ln.strip():
            rows.append(tuple((h, ln[a:b].strip()) for h, (a, b) in zip(head, spans)))
    return tuple(rows)
