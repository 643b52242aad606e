"""Ops scripting over logs: NVIDIA Xid errors out of dmesg / journal / syslog text with pandas, and the same answer
from a shell pipeline (grep, sed, awk), checked against each other (chapters 12 and 27).

Xid lines come in several shapes — ``[ 1843.30] NVRM: Xid (PCI:0000:01:00): 31, pid=…``, with ``dmesg -T`` dates,
behind a syslog prefix, or as journal lines — and newer drivers print "fallen off the bus" without an Xid number,
which counts as Xid 79 (NVIDIA/NVSentinel#155). The meaning and the action come from ``data/xid.yaml``.

    from helpers.ops import logs
    df = logs.xid_events(open("dmesg.txt").read())     # one row per event: pci, xid, pid, process, name, action
    logs.xid_summary(df)                               # events per GPU and Xid
    logs.shell_xid_counts("dmesg.txt")                 # the grep | sed | awk pipeline, run for real
"""
from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pandas as pd
import yaml

_XID = re.compile(r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F:.]+)\): (?P<xid>[0-9]+),\s*(?P<rest>.*)$")
_PID = re.compile(r"pid=(?:'?<unknown>'?|(?P<pid>[0-9]+))")
_NAME = re.compile(r"name=(?P<name>[^,\s]+)")
_FALLEN = re.compile(r"NVRM: (?:The NVIDIA GPU |GPU at (?:PCI:)?)(?P<pci>[0-9a-fA-F:.]+)")
_STAMP = re.compile(r"^\s*(?:\[\s*(?P<stamp>[^\]]+)\]|(?P<sys>[A-Z][a-z]{2}\s+\d+\s[\d:]{8})\s\S+\s\S+:"
                    r"|(?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?))", re.A)   # ASCII digits only
SHELL_PIPELINE = (r"grep -o 'NVRM: Xid (PCI:[0-9a-fA-F:.]*): [0-9]*' FILE"
                  r" | sed -E 's/.*PCI:([0-9a-fA-F:.]+)\): ([0-9]+)/\1 \2/'"
                  r" | awk '{n[$1 FS $2]++} END {for (k in n) print k, n[k]}' | sort")


@lru_cache(maxsize=1)
def xid_table() -> pd.DataFrame:
    rows = yaml.safe_load((Path(__file__).parent / "data" / "xid.yaml").read_text(encoding="utf-8"))
    return pd.DataFrame(rows).set_index("xid")


def _stamp(line: str) -> str:
    m = _STAMP.match(line)
    return (m["stamp"] or m["sys"] or m["iso"]).strip() if m else ""


def xid_events(text: str) -> pd.DataFrame:
    """One row per Xid event (and per fallen-off-the-bus message, as Xid 79 with ``inferred=True``)."""
    rows = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _XID.search(line)
        if m:
            pid, name = _PID.search(m["rest"]), _NAME.search(m["rest"])
            rows.append({"time": _stamp(line), "pci": m["pci"].lower(), "xid": int(m["xid"]),
                         "pid": int(pid["pid"]) if pid and pid["pid"] else None,
                         "process": name["name"] if name and name["name"].strip("'") != "<unknown>" else None,
                         "inferred": False,
                         "message": m["rest"][:120]})
            continue
        if "fallen off the bus" in line or (i + 2 < len(lines) and "fallen off the bus" in lines[i + 2]
                                            and "The NVIDIA GPU" in line):
            f = _FALLEN.search(line)
            if f:
                rows.append({"time": _stamp(line), "pci": re.sub(r"\.[0-7]$", "", f["pci"].lower()), "xid": 79, "pid": None,
                             "process": None, "inferred": True, "message": "GPU has fallen off the bus"})
    df = pd.DataFrame(rows, columns=["time", "pci", "xid", "pid", "process", "inferred", "message"])
    df["pid"] = df["pid"].astype("Int64")
    table = xid_table()
    df["name"] = df["xid"].map(table["name"]).fillna("not in the book's table: see NVIDIA's Xid catalogue")
    df["cause"] = df["xid"].map(table["cause"]).fillna("unknown")
    df["action"] = df["xid"].map(table["action"]).fillna("inspect")
    return df


def xid_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Events per GPU (PCI address) and Xid, with the action for each."""
    if df.empty:
        return pd.DataFrame(columns=["pci", "xid", "events", "name", "action"])
    g = df.groupby(["pci", "xid"]).size().rename("events").reset_index()
    g["name"] = g["xid"].map(xid_table()["name"]).fillna("?")
    g["action"] = g["xid"].map(xid_table()["action"]).fillna("inspect")
    return g.sort_values(["pci", "xid"]).reset_index(drop=True)


def shell_xid_counts(path: str | Path, timeout_s: float = 30.0) -> pd.DataFrame | None:
    """Run :data:`SHELL_PIPELINE` on ``path`` (grep, sed, awk must exist; None otherwise): pci, xid, events."""
    if not all(shutil.which(t) for t in ("grep", "sed", "awk", "sort", "bash")):
        return None
    cmd = SHELL_PIPELINE.replace("FILE", "\"$1\"")
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd} || [ $? -eq 1 ]", "xid", str(path)],
                       capture_output=True, text=True, timeout=timeout_s)
    if p.returncode != 0:
        raise RuntimeError(f"shell pipeline failed ({p.returncode}): {p.stderr.strip()}")
    rows = [line.split() for line in p.stdout.splitlines() if line.strip()]
    return pd.DataFrame([{"pci": a.lower(), "xid": int(b), "events": int(c)} for a, b, c in rows],
                        columns=["pci", "xid", "events"])


_SYSLOG = re.compile(r"^(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})\s(?P<time>\d\d:\d\d:\d\d)\s(?P<host>\S+)\s"
                     r"(?P<program>[^\s:\[]+)(?:\[(?P<pid>\d+)\])?:\s(?P<message>.*)$", re.A)   # ASCII digits only


def parse_syslog(text: str) -> pd.DataFrame:
    """RFC 3164-style lines (``/var/log/syslog``, ``journalctl`` short output) into columns; other lines are
    counted in ``df.attrs["unparsed"]`` rather than dropped silently."""
    rows, unparsed = [], 0
    for line in text.splitlines():
        m = _SYSLOG.match(line)
        if m:
            rows.append(m.groupdict())
        elif line.strip():
            unparsed += 1
    df = pd.DataFrame(rows, columns=["month", "day", "time", "host", "program", "pid", "message"])
    df["pid"] = pd.to_numeric(df["pid"]).astype("Int64")
    df.attrs["unparsed"] = unparsed
    return df
