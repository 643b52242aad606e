"""Read what ``nvidia-smi`` prints: the plain status table and the full ``nvidia-smi -q`` report (chapters 01, 02).

Both are what people paste into issues and tickets, so both are read as text: :func:`parse_table` reads the boxed
table (one block of two lines per GPU, then the process list) and :func:`parse_query` the indented ``-q`` report
(a tree of ``Key : value`` lines, four spaces per level). Values keep nvidia-smi's units in the field names
(``memory_total_MiB``, ``power_limit_W``); ``N/A`` becomes None. Text that is neither raises ``ValueError`` saying
what it saw. ``python -m helpers smiparse --out F.json`` captures the three outputs on a GPU machine, raw text
included. This module imports no other wing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


def _f(v: str | None) -> float | None:
    if v is None:
        return None
    m = re.match(r"\s*([-+]?[0-9]+(?:\.[0-9]+)?)", v)
    return float(m.group(1)) if m else None


@dataclass(frozen=True)
class TableGPU:
    index: int
    name: str                 # as printed; the table may cut long names ("Tesla V100-SXM2...")
    name_truncated: bool
    persistence: str
    bus_id: str
    temp_C: float | None
    perf_state: str
    power_W: float | None
    power_cap_W: float | None
    memory_used_MiB: float
    memory_total_MiB: float
    util_pct: float | None
    compute_mode: str


@dataclass(frozen=True)
class Table:
    driver_version: str | None
    cuda_version: str | None
    gpus: tuple               # TableGPU, …
    processes: tuple          # (gpu index, pid, type, name, memory MiB or None), …


_TOP = re.compile(r"\|\s*([0-9]+)\s+(.+?)\s+(On|Off)\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9])\s+"
                  r"(?:On|Off)\s*\|\s*(\S+)\s*\|")
_BOTTOM = re.compile(r"\|\s*(\S+)\s+([0-9]+|N/A)C?\s+(P[0-9]+|N/A)\s+(?:\S+\s+)?([0-9]+|N/A)W?\s*/\s*([0-9]+|N/A)W?\s*\|"
                     r"\s*([0-9]+)MiB\s*/\s*([0-9]+)MiB\s*\|\s*([0-9]+|N/A)%?\s+(\S+)\s*\|")


def parse_table(text: str) -> Table:
    """The plain ``nvidia-smi`` table (driver 4xx–5xx layouts)."""
    head = re.search(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)\s+CUDA Version:\s*(\S+)", text)
    lines = text.splitlines()
    gpus, procs, in_procs = [], [], False
    for i, ln in enumerate(lines):
        if "Processes:" in ln:
            in_procs = True
            continue
        if in_procs:
            m = re.match(r"\|\s+([0-9]+)\s+(?:\S+\s+\S+\s+)?([0-9]+)\s+([CGM+]+)\s+(.+?)\s+([0-9]+MiB|N/A)\s*\|", ln)
            if m:
                procs.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4).strip(), _f(m.group(5))))
            continue
        m = _TOP.search(ln)
        if not m or i + 1 >= len(lines):
            continue
        b = _BOTTOM.search(lines[i + 1])
        if not b:
            raise ValueError(f"nvidia-smi: GPU {m.group(1)}'s second line is not temperature/power/memory: "
                             f"{lines[i + 1].strip()[:80]!r}")
        name = m.group(2).strip()
        gpus.append(TableGPU(int(m.group(1)), name, name.endswith("..."), m.group(3), m.group(4),
                             _f(b.group(2)), b.group(3), _f(b.group(4)), _f(b.group(5)), float(b.group(6)),
                             float(b.group(7)), _f(b.group(8)), b.group(9)))
    if not gpus:
        raise ValueError("nvidia-smi: no GPU rows (\"|   0  NVIDIA … | 00000000:… |\") found"
                         + ("; the header is there, so the table was cut or no GPU is visible" if head else
                            f"; saw {len(lines)} lines without the NVIDIA-SMI header"))
    return Table(head.group(2) if head else None, head.group(3) if head else None, tuple(gpus), tuple(procs))


def _tree(lines: list[str]) -> list[tuple[tuple[str, ...], str | None]]:
    """(path, value) for every line of the ``-q`` report; section lines have value None."""
    out, stack = [], []
    for ln in lines:
        if not ln.strip() or ln.startswith("="):
            continue
        indent = max((len(ln) - len(ln.lstrip(" "))) // 4 - 1, 0)     # GPU sections start at 4 spaces
        key, sep, val = ln.strip().partition(" : ") if " : " in ln else (ln.strip().rstrip(":"), "", "")
        key = key.strip()
        stack = stack[:indent] + [key]
        out.append((tuple(stack), val.strip() if sep else None))
    return out


@dataclass(frozen=True)
class QueryGPU:
    bus_id: str
    name: str
    architecture: str | None
    memory_total_MiB: float | None
    memory_used_MiB: float | None
    perf_state: str | None
    temp_C: float | None
    power_draw_W: float | None
    power_limit_W: float | None
    graphics_clock_MHz: float | None
    sm_clock_MHz: float | None
    max_graphics_clock_MHz: float | None
    ecc_mode: str | None
    throttle_active: tuple    # clock event reasons that read "Active"
    fields: dict              # every "Section/Key" -> value of this GPU


@dataclass(frozen=True)
class Query:
    driver_version: str | None
    cuda_version: str | None
    attached_gpus: int | None
    gpus: tuple               # QueryGPU, …


def parse_query(text: str) -> Query:
    """The ``nvidia-smi -q`` report (all GPUs)."""
    if "NVSMI LOG" not in text and not re.search(r"^GPU [0-9A-Fa-f]{4,8}:", text, re.M):
        raise ValueError("nvidia-smi -q: no \"==NVSMI LOG==\" banner and no \"GPU 00000000:…\" section; "
                         "is this the output of nvidia-smi -q?")
    top, blocks, cur = {}, [], None
    for ln in text.splitlines():
        if re.match(r"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9]\s*$", ln):
            cur = [ln.split()[1], []]
            blocks.append(cur)
        elif cur is not None:
            cur[1].append(ln)
        elif " : " in ln:
            k, _, v = ln.partition(" : ")
            top[k.strip()] = v.strip()
    gpus = []
    for bus, lines in blocks:
        fields = {"/".join(p): v for p, v in _tree(lines) if v is not None}
        fields = {k: (None if v in ("N/A", "") else v) for k, v in fields.items()}
        g = lambda *keys: next((fields[k] for k in keys if fields.get(k) is not None), None)  # noqa: E731
        reasons = tuple(k.split("/")[-1] for k, v in fields.items()
                        if k.startswith(("Clocks Event Reasons/", "Clocks Throttle Reasons/")) and v == "Active")
        gpus.append(QueryGPU(bus, g("Product Name") or "?", g("Product Architecture"),
                             _f(g("FB Memory Usage/Total")), _f(g("FB Memory Usage/Used")),
                             g("Performance State"), _f(g("Temperature/GPU Current Temp")),
                             _f(g("GPU Power Readings/Power Draw", "GPU Power Readings/Instantaneous Power Draw",
                                  "Power Readings/Power Draw")),
                             _f(g("GPU Power Readings/Current Power Limit", "GPU Power Readings/Power Limit",
                                  "Power Readings/Power Limit", "Power Readings/Enforced Power Limit")),
                             _f(g("Clocks/Graphics")), _f(g("Clocks/SM")), _f(g("Max Clocks/Graphics")),
                             g("ECC Mode/Current"), reasons, fields))
    if not gpus:
        raise ValueError("nvidia-smi -q: the banner is there but no \"GPU 00000000:…\" section follows")
    att = top.get("Attached GPUs")
    return Query(top.get("Driver Version"), top.get("CUDA Version"), int(att) if att and att.isascii() and att.isdigit() else None,
                 tuple(gpus))


def capture(timeout_s: float = 30.0) -> tuple[list[dict], str]:
    """Run ``nvidia-smi``, ``nvidia-smi -q`` and ``nvidia-smi topo -m`` here; one record per command with its raw
    text (so the output can join the real-input corpus) and what the readers made of it. ([], reason) without
    nvidia-smi."""
    import shutil

    from helpers.core import inputs, topology

    exe = shutil.which("nvidia-smi")
    if exe is None:
        return [], "nvidia-smi is not on PATH (no NVIDIA driver here): nothing to capture"
    recs = []
    for args, read in ((["nvidia-smi"], parse_table), (["nvidia-smi", "-q"], parse_query),
                       (["nvidia-smi", "topo", "-m"], topology.parse_topo_matrix)):
        # a hung driver or a runaway output ends the run (ProgramFailed, exit 1), not the machine's memory
        p = inputs.run_program([exe, *args[1:]], timeout_s=timeout_s, what=" ".join(args),
                               max_bytes=64 * 2**20, max_rows=500_000)
        raw, err = p.stdout, (p.stderr.strip()[:2000] if p.returncode else "")
        try:
            parsed = read(raw) if raw else None
            summary = (f"{len(parsed.gpus)} GPU(s): {parsed.gpus[0].name}" if isinstance(parsed, (Table, Query))
                       else f"{len(parsed.devices)} devices" if parsed else "no matrix")
        except ValueError as e:
            summary = f"reader refused it: {e}"
        recs.append({"command": " ".join(args), "returncode_error": err, "parsed": summary, "raw_text": raw})
    return recs, f"captured {len(recs)} commands with {exe}"


def main(argv=None) -> int:
    import argparse
    import sys

    from helpers.core import results

    ap = argparse.ArgumentParser(prog="python -m helpers smiparse",
                                 description="capture nvidia-smi's text outputs here and read them")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    recs, why = capture()
    print(why, file=sys.stderr)
    if not recs:
        return 2
    results.emit(recs, "nvidia_smi_text", a, columns=["command", "parsed", "returncode_error"])
    return 0


if __name__ == "__main__":
    import sys

    from helpers.core import cli

    sys.exit(cli.run(main))
