"""Readers for the NVLink and GPU-inventory views of a node: ``nvidia-smi nvlink -e`` (error counters),
``dcgmi nvlink -s`` (link states of every GPU and NVSwitch) and ``dcgmi discovery -l`` (the GPUs DCGM sees)
(chapters 12 and 27). ``nvidia-smi nvlink --status`` is read by :func:`helpers.ops.dcgmread.parse_nvlink_status`.

Outputs pasted with elisions (``[...]``, ``...``) or cut off are read as far as they go and say so (``elided``,
``complete``): a reader that counted 2 links where the GPU has 18 would be wrong without that flag.

    from helpers.ops import nvlinkread
    nvlinkread.parse_nvlink_errors(text)      # NvLinkErrors(counters=((gpu, link, name, value), …), elided)
    nvlinkread.parse_dcgmi_nvlink(text)       # DcgmiLinks(entities=(("gpuId 0", ("U", …)), …), switches_found)
    nvlinkread.parse_dcgmi_discovery(text)    # Discovery(found, gpus=((id, name, pci, uuid), …), complete)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_ELIDED = re.compile(r"^\s*(\[\.\.\.\]|\.\.\.|…)\s*$")


@dataclass(frozen=True)
class NvLinkErrors:
    counters: tuple              # ((gpu, link, counter name, value), …); value None when printed "N/A"
    elided: bool                 # the paste left links out ("[...]")

    def nonzero(self) -> tuple:
        return tuple(c for c in self.counters if c[3])


def parse_nvlink_errors(text: str) -> NvLinkErrors:
    """``nvidia-smi nvlink -e`` (``--errorcounters``): ``GPU n: name (UUID: …)`` then ``Link k: Replay Errors: 0``."""
    out, gpu, elided = [], None, False
    for ln in text.splitlines():
        g = re.match(r"^GPU ([0-9]+): ([^(]+?)\s*(?:\(UUID:.*)?$", ln.strip())
        if g:
            gpu = f"GPU {g.group(1)}: {g.group(2)}"
            continue
        elided |= bool(_ELIDED.match(ln))
        m = re.match(r"^\s*Link ([0-9]+): ([A-Za-z][\w ()/-]*?(?:Errors|errors|events|discards)): ([0-9]+|N/A)\s*$", ln)
        if m and gpu:
            out.append((gpu, int(m.group(1)), m.group(2), None if m.group(3) == "N/A" else int(m.group(3))))
    if not out:
        raise ValueError("nvidia-smi nvlink -e: no 'GPU n:' section with 'Link n: Replay Errors: N' lines")
    return NvLinkErrors(tuple(out), elided)


@dataclass(frozen=True)
class DcgmiLinks:
    entities: tuple              # (("gpuId 0", ("U", "U", …)), ("NvSwitch 0", …)) in printed order
    switches_found: bool

    def down(self) -> dict:
        """{entity: [link index, …]} of links Down (D) or Disabled (X); Not Supported (_) is not a fault."""
        return {e: [i for i, s in enumerate(st) if s in ("D", "X")] for e, st in self.entities
                if any(s in ("D", "X") for s in st)}


def parse_dcgmi_nvlink(text: str) -> DcgmiLinks:
    """``dcgmi nvlink -s`` (``--link-status``): ``gpuId N:`` followed by one U/D/X/_ per link."""
    ents, cur, section = [], None, ""
    for ln in text.splitlines():
        s = ln.strip()
        if s in ("GPUs:", "NvSwitches:"):
            section = s[:-1]
            continue
        e = re.match(r"^(gpuId|physicalId|NvSwitch(?: \w+)?)\s*([0-9]+):$", s)
        if e:
            cur = f"{e.group(1)} {e.group(2)}" if section != "NvSwitches" or e.group(1) != "physicalId" \
                else f"NvSwitch {e.group(2)}"
            continue
        if cur and s and re.fullmatch(r"[UDX_](?: [UDX_])*", s):
            ents.append((cur, tuple(s.split())))
            cur = None
    if not ents:
        raise ValueError("dcgmi nvlink -s: no 'gpuId N:' line followed by U/D/X/_ link states")
    return DcgmiLinks(tuple(ents), "No NvSwitches found" not in text)


@dataclass(frozen=True)
class Discovery:
    found: int | None            # "8 GPUs found." (None when the line is missing)
    active_only: bool            # "(Active)": newer DCGM lists only the active GPUs
    gpus: tuple                  # ((gpu id, name, PCI bus id, UUID), …) as far as the table goes
    complete: bool               # every GPU the count announces is in the table

    def unnamed(self) -> tuple:
        return tuple(g for g in self.gpus if not g[1] or g[1] == "<<<NULL>>>")


def parse_dcgmi_discovery(text: str) -> Discovery:
    """``dcgmi discovery -l``: ``N GPUs found.`` and the ``| GPU ID | Device Information |`` table."""
    m = re.search(r"([0-9]+) GPUs? found(?: \((\w+)\))?", text)
    rows, cur = [], None
    for ln in text.splitlines():
        cols = [c.strip() for c in ln.strip().strip("|").split("|")] if ln.strip().startswith("|") else []
        if len(cols) < 2 or cols[0] == "GPU ID":
            continue
        if cols[0].isascii() and cols[0].isdigit():
            cur = {"id": int(cols[0])}
            rows.append(cur)
        k, _, v = cols[1].partition(":")
        if cur is not None and v:
            cur[k.strip()] = v.strip()
    if m is None and not rows:
        raise ValueError("dcgmi discovery -l: no 'N GPUs found.' line and no '| GPU ID | Device Information |' rows")
    gpus = tuple((r["id"], r.get("Name", ""), r.get("PCI Bus ID", ""), r.get("Device UUID", "")) for r in rows)
    found = int(m.group(1)) if m else None
    complete = found is not None and len(gpus) == found and all(g[3] for g in gpus)
    return Discovery(found, bool(m and m.group(2) == "Active"), gpus, complete)
