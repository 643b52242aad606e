"""Reader for ``lspci -nn`` / ``lspci -vvv`` on a GPU node: each device's PCIe link as trained (``LnkSta``) against
what it can do (``LnkCap``), ACS control bits and AER error status (chapters 02 and 27).

A GPU that trained at 2.5 GT/s or x8 moves data at a fraction of its rate; idle GPUs drop to Gen1 to save power, so a
speed downgrade on an idle GPU is re-checked under load before a card is pulled. Lines from a bare excerpt (no
device header) are kept under the address "?".

    from helpers.ops import pcinode
    devs = pcinode.parse_lspci(text)       # (PciDevice(address, description, link_cap…, link_sta…, aer…), …)
    [d for d in devs if d.downgraded]      # the links that trained below their capability
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_HEAD = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*)$")
_SPEED = re.compile(r"Speed\s+([0-9.]+)GT/s(?:\s*\((downgraded|ok)\))?")
_WIDTH = re.compile(r"Width\s+x([0-9]+)(?:\s*\((downgraded|ok)\))?")


@dataclass(frozen=True)
class PciDevice:
    address: str                 # "62:00.0", or "?" for an excerpt without its header line
    description: str             # "VGA compatible controller: NVIDIA Corporation AD102 …"
    ids: str                     # "10de:2684" from lspci -nn, else ""
    cap_speed_GTps: float | None
    cap_width: int | None
    sta_speed_GTps: float | None
    sta_width: int | None
    downgraded: tuple            # ("speed 2.5 of 16 GT/s", "width x8 of x16")
    aer_uncorrectable: tuple     # UESta bits set (+)
    aer_correctable: tuple       # CESta bits set (+)
    acs_ctl: str                 # the ACSCtl line, "" when not printed


def _bits(line: str) -> tuple:
    return tuple(b[:-1] for b in line.split(":", 1)[1].split() if b.endswith("+"))


def _finish(d: dict) -> PciDevice:
    down = []
    cs, ss = d.get("cap_speed"), d.get("sta_speed")
    if ss is not None and (d.get("speed_flag") == "downgraded" or (cs is not None and ss < cs)):
        down.append(f"speed {ss:g} of {cs:g} GT/s" if cs else f"speed {ss:g} GT/s (downgraded)")
    cw, sw = d.get("cap_width"), d.get("sta_width")
    if sw is not None and (d.get("width_flag") == "downgraded" or (cw is not None and sw < cw)):
        down.append(f"width x{sw} of x{cw}" if cw else f"width x{sw} (downgraded)")
    return PciDevice(d["address"], d["description"], d.get("ids", ""), cs, cw, ss, sw, tuple(down),
                     d.get("ue", ()), d.get("ce", ()), d.get("acs", ""))


def parse_lspci(text: str) -> tuple:
    devs, cur = [], None
    for ln in text.splitlines():
        m = _HEAD.match(ln)
        if m:
            if cur:
                devs.append(_finish(cur))
            ids = re.findall(r"\[([0-9a-f]{4}:[0-9a-f]{4})\]", m.group(2))
            cur = {"address": m.group(1), "description": m.group(2), "ids": ids[0] if ids else ""}
            continue
        s = ln.strip()
        if not s:
            continue
        if cur is None:
            cur = {"address": "?", "description": ""}
        if s.startswith(("LnkCap:", "LnkSta:")):
            key = "cap" if s.startswith("LnkCap") else "sta"
            sp, wd = _SPEED.search(s), _WIDTH.search(s)
            if sp:
                cur[f"{key}_speed"] = float(sp.group(1))
                if key == "sta":
                    cur["speed_flag"] = sp.group(2)
            if wd:
                cur[f"{key}_width"] = int(wd.group(1))
                if key == "sta":
                    cur["width_flag"] = wd.group(2)
        elif s.startswith("UESta:"):
            cur["ue"] = _bits(s)
        elif s.startswith("CESta:"):
            cur["ce"] = _bits(s)
        elif s.startswith("ACSCtl:"):
            cur["acs"] = s.split(":", 1)[1].strip()
    if cur:
        devs.append(_finish(cur))
    if not devs:
        raise ValueError("lspci: no device line (00:00.0 …) and no LnkCap/LnkSta line")
    return tuple(devs)
