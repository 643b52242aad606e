"""Readers for what DCGM and ``nvidia-smi nvlink`` print on a GPU node: ``dcgmi diag -r 1/2/3`` tables (old and new
layouts, runs cut off mid-table), ``nvidia-smi nvlink --status`` and the DCGM exporter's Prometheus text (chapters 12
and 27).

The exporter text is read by the exposition format's own rules, not by ``prometheus_client``'s parser: a family keeps
the name the exporter printed (no ``_total`` appended, so DCGM's counters keep their names), and every label is kept
(UUID, Hostname, driver, MIG ``GPU_I_ID`` …), so two series that differ in one label never overwrite each other.

    from helpers.ops import dcgmread
    rep = dcgmread.parse_dcgmi_diag(text)        # DiagReport(dcgm_version, tests=(DiagTest…), complete)
    links = dcgmread.parse_nvlink_status(text)   # (NvLink(gpu, link, GBps or None), …)
    samples = dcgmread.parse_prometheus(text)    # (PromSample(name, labels, value, type), …)
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass


# ---- dcgmi diag ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DiagTest:
    category: str                # Deployment / Hardware / Integration / Stress / …
    test: str                    # "memory", "pcie", "Denylist" …
    result: str                  # Pass / Fail / Warn / Skip (as printed)
    gpu_results: tuple           # (("GPU0", "Pass"), …)
    warnings: tuple              # the Warning texts, lines re-joined


@dataclass(frozen=True)
class DiagReport:
    dcgm_version: str | None
    driver_version: str | None
    tests: tuple                 # DiagTest, …
    complete: bool               # False when the table stops before its closing border (a run cut off)


_GPU_RES = re.compile(r"^GPU([0-9]+):\s*(\w+)")


def parse_dcgmi_diag(text: str) -> DiagReport:
    """``dcgmi diag -r N`` text output (DCGM 2.x/3.x Deployment rows, 4.x per-GPU rows)."""
    rows = [ln.rstrip() for ln in text.splitlines() if ln.lstrip().startswith(("|", "+"))]
    if not any("Diagnostic" in r or "DCGM Version" in r for r in rows):
        raise ValueError("dcgmi diag: no '| Diagnostic | Result |' table; is this the output of dcgmi diag -r N?")
    meta, tests, category, cur = {}, [], "", None
    for r in rows:
        m = re.match(r"^[|+]-+\s+(\w[\w ]*?)\s+-+[+|]", r)
        if m:
            category = m.group(1)
            continue
        if set(r) <= set("+-=| "):
            continue
        cols = [c.strip() for c in r.strip("|").split("|")]
        if len(cols) < 2 or cols[0] == "Diagnostic":
            continue
        name, val = cols[0], cols[1]
        if category == "Metadata":
            meta[name] = val
        elif name in ("Warning", "Info", "Error"):
            if cur is not None:
                cur["warnings"].append(val)
        elif name:
            cur = {"category": category, "test": name, "result": val, "gpu": [], "warnings": []}
            tests.append(cur)
        elif cur is not None:
            g = _GPU_RES.match(val)
            if g:
                cur["gpu"].append((f"GPU{g.group(1)}", g.group(2)))
            elif cur["warnings"]:                  # DCGM wraps at 45 characters, mid-word; a shorter line ended a word
                prev = cur["warnings"][-1]
                lead = r.strip().strip("|").split("|")[1][1:2] == " "      # the wrapped text began with a space
                cur["warnings"][-1] = prev + ("" if len(prev.rsplit("\x00", 1)[-1]) >= 45 else " ") + \
                    "\x00" + (" " if lead else "") + val
    last = rows[-1] if rows else ""
    complete = bool(re.fullmatch(r"\+[-+]+\+", last))
    return DiagReport(meta.get("DCGM Version"), meta.get("Driver Version Detected"),
                      tuple(DiagTest(t["category"], t["test"], t["result"], tuple(t["gpu"]),
                                     tuple(" ".join(w.replace("\x00", "").split()) for w in t["warnings"]))
                            for t in tests), complete)


# ---- nvidia-smi nvlink --status ----------------------------------------------------------------------------

@dataclass(frozen=True)
class NvLink:
    gpu: str                     # "GPU 3: Tesla V100-SXM2-32GB"
    link: int                    # -1: NVML reported no link at all ("all links are inActive")
    speed_GBps: float | None     # None: <inactive>


def parse_nvlink_status(text: str) -> tuple:
    """``nvidia-smi nvlink --status`` (``-s``): one NvLink per link line; ``<inactive>`` links have no speed; a GPU
    for which NVML answers "Unable to retrieve NVLink information as all links are inActive" gets one NvLink with
    ``link = -1``. Elision lines (``[...]``) are skipped: the caller counts only the links printed."""
    out, gpu = [], None
    for ln in text.splitlines():
        g = re.match(r"^GPU ([0-9]+): ([^(]+?)\s*(?:\(UUID:.*)?$", ln.strip())
        if g:
            gpu = f"GPU {g.group(1)}: {g.group(2)}"
            continue
        m = re.match(r"^\s*Link ([0-9]+): (?:([0-9.]+) GB/s|<inactive>)", ln)
        if m and gpu:
            out.append(NvLink(gpu, int(m.group(1)), float(m.group(2)) if m.group(2) else None))
        elif gpu and re.search(r"Unable to retrieve NVLink information as all links are in ?active", ln, re.I):
            out.append(NvLink(gpu, -1, None))
    if not out:
        raise ValueError("nvidia-smi nvlink: no 'GPU n:' section with 'Link n: … GB/s' lines")
    return tuple(out)


# ---- Prometheus text exposition (the DCGM exporter) --------------------------------------------------------

@dataclass(frozen=True)
class PromSample:
    name: str                    # exactly as printed
    labels: tuple                # (("UUID", "GPU-…"), …) every label, in printed order
    value: float
    type: str                    # from the family's # TYPE line; "untyped" when none names this sample

    def label(self, key: str, default: str = "") -> str:
        return dict(self.labels).get(key, default)


_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')
_SAMPLE = re.compile(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s+(\S+)(?:\s+-?[0-9]+)?\s*$")


def _unescape(v: str) -> str:
    return v.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")


def parse_prometheus(text: str) -> tuple:
    """Every sample of a text-format scrape. Bad sample lines raise with their line number."""
    types, out = {}, []
    for n, ln in enumerate(text.splitlines(), 1):
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#"):
            p = s.split(None, 3)
            if len(p) >= 4 and p[1] == "TYPE":
                types[p[2]] = p[3].strip()
            continue
        m = _SAMPLE.match(s)
        if not m:
            raise ValueError(f"line {n}: not a Prometheus sample: {s[:80]!r}")
        labels, body = [], (m.group(2) or "{}")[1:-1]
        pos = 0
        while pos < len(body):
            lm = _LABEL.match(body, pos)
            if not lm:
                raise ValueError(f"line {n}: bad label set at {body[pos:pos + 30]!r}")
            labels.append((lm.group(1), _unescape(lm.group(2))))
            pos = lm.end()
        v = m.group(3)
        value = {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(v)
        try:                                      # float() alone would take '٧٩' and '1_0'
            value = float(v) if value is None and v.isascii() and "_" not in v else value
        except ValueError:
            value = None
        if value is None:
            raise ValueError(f"line {n}: value {v[:40]!r} is not a number (ASCII digits only)")
        out.append(PromSample(m.group(1), tuple(labels), value,
                              types.get(m.group(1), "untyped")))
    if not out:
        raise ValueError("no Prometheus samples (name{labels} value lines)")
    return tuple(out)


def series(samples) -> dict:
    """{(name, labels): value} — one key per distinct label set, so nothing is overwritten."""
    return {(s.name, s.labels): s.value for s in samples}
