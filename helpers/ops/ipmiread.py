"""Readers for ``ipmitool sdr`` (``sdr list``, ``sdr elist`` and ``sdr -v``) and ``ipmitool sel list``/``elist``
(chapter 27, "BMC and IPMI"). ``ipmitool sensor`` (the table with six thresholds) is read by
:func:`helpers.ops.bmc.parse_ipmitool_sensor`.

The sdr views print the BMC's own status (``ok``, ``ns`` no reading, ``nc``/``cr``/``nr`` non-critical, critical,
non-recoverable); ``-v`` adds the thresholds and, for discrete sensors, the asserted states — where a state such as
"Redundancy Lost" can hide behind a status ``ok`` (ipmitool/ipmitool#176).

    from helpers.ops import ipmiread
    ipmiread.parse_ipmitool_sdr(text)     # (SdrSensor(name, reading, unit, status, asserted, thresholds), …)
    ipmiread.parse_ipmitool_sel(text)     # (SelEvent(record, date, time, sensor, event, direction), …)
"""
from __future__ import annotations

import re
from dataclasses import dataclass

STATUS = {"ok": "ok", "ns": "absent", "nc": "warning", "lnc": "warning", "unc": "warning", "cr": "critical",
          "lcr": "critical", "ucr": "critical", "nr": "non-recoverable", "lnr": "non-recoverable",
          "unr": "non-recoverable", "lower non-critical": "warning", "upper non-critical": "warning",
          "lower critical": "critical", "upper critical": "critical", "lower non-recoverable": "non-recoverable",
          "upper non-recoverable": "non-recoverable"}
_THRESH = {"Upper non-recoverable": "unr", "Upper critical": "ucr", "Upper non-critical": "unc",
           "Lower non-recoverable": "lnr", "Lower critical": "lcr", "Lower non-critical": "lnc"}


@dataclass(frozen=True)
class SdrSensor:
    name: str
    reading: float | None        # None: no reading / disabled / a discrete state
    unit: str                    # "degrees C", "RPM", "Watts", "percent", "discrete" …
    status: str                  # ok / absent / warning / critical / non-recoverable (from the BMC's column)
    entity: str                  # "7.1" in elist and -v, else ""
    asserted: tuple              # discrete states asserted (sdr -v), e.g. ("Redundancy Lost",)
    thresholds: tuple            # (("ucr", 50.0), …) from sdr -v


def _reading(text: str) -> tuple[float | None, str]:
    m = re.match(r"^(-?[0-9.]+)\s*(?:\(\+/- [0-9.]+\)\s*)?(.*)$", text.strip())
    if m and not text.strip().lower().startswith("0x"):
        return float(m.group(1)), m.group(2).strip()
    if text.strip().lower().startswith("0x"):                         # discrete sensors keep their hex value
        return float(int(text.strip(), 16)), "discrete"
    return None, ""


def _verbose(text: str) -> tuple:
    out = []
    for block in re.split(r"\n\s*\n", text):
        f, asserted, key = {}, [], ""
        for ln in block.splitlines():
            m = re.match(r"^\s*([^:\[]+?)\s*:\s*(.*)$", ln)
            if m and not ln.startswith(" " * 20):
                key = m.group(1)
                f[key] = m.group(2).strip()
            elif key == "States Asserted" and ln.strip().startswith("["):
                asserted.append(ln.strip().strip("[]"))
        if "Sensor ID" not in f:
            continue
        reading, unit = _reading(f.get("Sensor Reading", ""))
        if "Discrete" in " ".join(f):
            unit = "discrete"
        st = STATUS.get(f.get("Status", "ok").lower(), "ok") if f.get("Sensor Reading") else "absent"
        th = tuple((v, float(f[k])) for k, v in _THRESH.items() if re.fullmatch(r"-?[0-9.]+", f.get(k, "")))
        out.append(SdrSensor(re.sub(r"\s*\(0x[0-9a-f]+\)$", "", f["Sensor ID"]), reading, unit, st,
                             f.get("Entity ID", "").split(" ")[0], tuple(asserted), th))
    return tuple(out)


def parse_ipmitool_sdr(text: str) -> tuple:
    if re.search(r"^Sensor ID\s+:", text, re.M):
        out = _verbose(text)
    else:
        out = []
        for ln in text.splitlines():
            p = [c.strip() for c in ln.split("|")]
            if len(p) == 3:                                       # sdr list: name | reading unit | status
                name, value, status, entity = p[0], p[1], p[2], ""
            elif len(p) == 5:                                     # sdr elist: name | id | status | entity | reading
                name, status, entity, value = p[0], p[2], p[3], p[4]
            else:
                continue
            reading, unit = _reading(value)
            st = STATUS.get(status.lower(), "ok")
            if value.lower() in ("no reading", "disabled") or status == "ns":
                st = "absent"
            out.append(SdrSensor(name, reading, unit, st, entity, (value,) if "Asserted" in value else (), ()))
        out = tuple(out)
    if not out:
        raise ValueError("ipmitool sdr: no 'name | reading | status' row and no 'Sensor ID :' record")
    return out


@dataclass(frozen=True)
class SelEvent:
    record: str                  # hex record id as printed
    date: str
    time: str
    sensor: str                  # "Power Supply PS2 Status"
    event: str                   # "Power Supply AC lost"
    direction: str               # Asserted / Deasserted / ""


# the time may carry a zone or AM/PM (ipmitool ≥ 1.8.19 prints "%X %Z": "23:09:44 CET"); Pre-Init rows print a
# ten-digit counter instead of a time; elist may add "| Reading 51 > Threshold 45 degrees C" after the direction
_SEL = re.compile(r"^\s*([0-9a-fA-F]+)\s*\|\s*([0-9/]+|Pre-Init)\s*\|\s*([^|]*?)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)"
                  r"\s*(?:\|\s*(Asserted|Deasserted)\s*)?(?:\|.*)?$")


def parse_ipmitool_sel(text: str) -> tuple:
    out = tuple(SelEvent(*(g or "" for g in m.groups())) for m in map(_SEL.match, text.splitlines()) if m)
    if not out:
        raise ValueError("ipmitool sel: no 'id | date | time | sensor | event | Asserted' row")
    return out
