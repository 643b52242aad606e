"""The rules of ``python -m helpers nodecheck`` for the formats read by :mod:`helpers.ops.slurmjson`,
:mod:`helpers.ops.nvlinkread` and :func:`helpers.ops.k8snode.parse_gfd_labels` (the others are in
:mod:`helpers.ops.noderules`, whose :class:`~helpers.ops.noderules.Finding` rows these return too).

Verdicts: a Slurm node in JSON is judged as its text form is (``["IDLE", "DRAIN"]`` = ``IDLE+DRAIN``: degraded);
an NVLink error counter above zero is degraded — a replay or recovery error means the link retrained, a CRC error
a bit error; DCGM's Down or Disabled link is failed for the GPU (Not Supported is not a fault); a GPU DCGM lists
without a name, or fewer GPUs than the count announces, is degraded; GFD labels are healthy unless a MIG
reconfiguration failed, the driver upgrade failed or no GPU is present, and they note time-slicing (replicas > 1)
and a memory label printed in bytes. Redfish ``Sensor``/``Fan``/``PowerSupply`` (:mod:`helpers.ops.redfishsensors`): a
reading at or beyond its Caution threshold is degraded, Critical or Fatal failed, and the BMC's own Health Warning /
Critical counts as degraded / failed too (so does a Critical sensor without a reading); a State Absent or Disabled
sensor, fan or supply is not a failure; an energy counter's thresholds are not applied (it only grows).
"""
from __future__ import annotations

import re

from helpers.ops.noderules import Finding, _state

FORMATS = ("slurm-json", "nvlink-errors", "dcgmi-nvlink", "dcgmi-discovery", "gfd-labels", "redfish-sensor",
           "redfish-sensors", "redfish-fan", "redfish-powersupply")
SAID = {"Warning": "degraded", "Critical": "failed"}


def _slurm_json(text: str, source: str) -> list:
    from helpers.ops import slurmjson, slurmread

    d = slurmjson.parse_slurm_json(text)
    tag = f" (Slurm {d.release})" if d.release else ""
    if d.kind == "nodes":
        return [Finding("Slurm node", n.name, *_state(slurmread, n.state, n.reason), source) for n in d.nodes]
    if d.kind == "sinfo":
        return [Finding("Slurm node", f"{r.partition} {r.nodelist}".strip(), *_state(slurmread, r.state, r.reason),
                        source) for r in d.sinfo]
    trouble = ("ReqNodeNotAvail", "NodeDown", "launch failed requeued held", "JobHeldAdmin")
    bad = [j for j in d.jobs if any(t in j.reason for t in trouble)]
    reasons = sorted({j.reason for j in d.jobs if j.reason})
    return [Finding("Slurm node", f"job {j.job_id}", "degraded", f"{j.state}: {j.reason}", source) for j in bad] or \
        [Finding("Slurm node", "queue", "healthy", f"{len(d.jobs)} jobs{tag}; states "
                 f"{', '.join(sorted({j.state for j in d.jobs}))}; reasons: {', '.join(reasons) or 'none'}", source)]


def _nvlink_errors(text: str, source: str) -> list:
    from helpers.ops.nvlinkread import parse_nvlink_errors

    rep = parse_nvlink_errors(text)
    out = []
    for gpu in dict.fromkeys(c[0] for c in rep.counters):
        mine = [c for c in rep.counters if c[0] == gpu]
        hot = [c for c in mine if c[3]]
        links = sorted({c[1] for c in mine})
        why = "; ".join(f"link {c[1]} {c[2]} {c[3]}" for c in hot) if hot else \
            f"all counters 0 on links {links[0]}…{links[-1]}" + (" (the paste elides some links)" if rep.elided else "")
        out.append(Finding("NVLink", gpu, "degraded" if hot else "healthy",
                           why + ("; reset with nvidia-smi nvlink -re, rerun under load and watch the rate" if hot
                                  else ""), source))
    return out


def _dcgmi_nvlink(text: str, source: str) -> list:
    from helpers.ops.nvlinkread import parse_dcgmi_nvlink

    d = parse_dcgmi_nvlink(text)
    down = d.down()
    return [Finding("NVLink", f"dcgmi {e}", "failed" if e in down else "healthy",
                    f"links {down[e]} Down/Disabled of {len(st)}" if e in down else
                    f"{sum(s == 'U' for s in st)} of {len(st)} links Up", source) for e, st in d.entities]


def _dcgmi_discovery(text: str, source: str) -> list:
    from helpers.ops.nvlinkread import parse_dcgmi_discovery

    d = parse_dcgmi_discovery(text)
    out = [Finding("GPUs", f"dcgmi GPU {g[0]}", "degraded" if g in d.unnamed() else "healthy",
                   (f"no name (DCGM prints {g[1] or 'nothing'}): NVML did not answer for it; "
                    if g in d.unnamed() else f"{g[1]}, ") + f"PCI {g[2] or '?'}", source) for g in d.gpus]
    if not d.complete:
        elided = re.search(r"^\s*(\.\.\.|\[\.\.\.\])\s*$", text, re.M) is not None
        out.append(Finding("GPUs", "dcgmi discovery", "healthy" if elided else "degraded",
                           f"{d.found} GPUs announced, {len(d.gpus)} listed in full: the paste "
                           f"{'elides rows' if elided else 'is cut off'}; compare with nvidia-smi -L", source))
    return out


def _gfd(text: str, source: str) -> list:
    from helpers.ops.k8snode import parse_gfd_labels

    g = parse_gfd_labels(text)
    f = dict(g.labels)
    bad = [k for k, v in (("nvidia.com/mig.config.state", "failed"), ("nvidia.com/gpu-driver-upgrade-state",
                                                                       "upgrade-failed"),
                          ("nvidia.com/gpu.present", "false")) if f.get(k) == v]
    mig = ", ".join(f"{n}×{p}" for p, n in g.mig_devices)
    why = (f"{g.count if g.count is not None else '?'} × {g.product}, "
           f"{g.memory_MiB:.0f} MiB" if g.memory_MiB is not None else f"{g.count} × {g.product}") + \
        (f", driver {g.driver}" if g.driver else "") + (f", MIG {g.mig_strategy}" if g.mig_strategy else "") + \
        (f": {mig}" if mig else "") + \
        (f"; time-sliced: {g.replicas} replicas share each GPU" if g.replicas and g.replicas > 1 else "") + \
        ("; gpu.memory label printed in bytes (an older GFD), converted" if g.memory_label_in_bytes else "")
    return [Finding("K8s node", "GPU feature discovery", "degraded" if bad else "healthy",
                    (f"{', '.join(f'{k}={f[k]}' for k in bad)}; " if bad else "") + why, source)]


def _sensor(s, source: str) -> Finding:
    comp = "fans" if s.reading_type == "Rotational" or s.physical_context == "Fan" or s.unit == "RPM" else \
        "PSUs" if s.physical_context == "PowerSupply" else "BMC sensors"
    said = SAID.get(s.health)
    item = s.name if s.name.replace(" ", "_") == s.id else f"{s.name} ({s.id})"   # iDRAC: "OutputPowerSensor" ×2
    if s.state in ("Absent", "Disabled"):
        return Finding(comp, item, "healthy", f"State {s.state}" + (", no reading" if s.reading is None else "") +
                       (f"; the BMC also says Health {s.health}, but an absent sensor is not a failure" if said else ""),
                       source)
    if s.reading is None:
        return Finding(comp, item, said or "healthy", f"no reading; BMC says {s.health or 'nothing'}", source)
    hit = None if s.counter else s.crossed()
    st = "degraded" if hit and hit[0].endswith("Caution") else "failed" if hit else "healthy"
    st = max(st, said or "healthy", key=("healthy", "degraded", "failed").index)
    why = f"{s.reading:.10g} {s.unit or s.reading_type}".strip() + (f" ({s.physical_context})" if s.physical_context
                                                                  else "")
    why += f", at or beyond {hit[0]} {hit[1]:g}" if hit else ""
    why += f"; BMC says {s.health}" if s.health not in ("OK", "") else ""
    if s.counter and s.crossed():
        why += f"; a cumulative counter: the BMC's {s.crossed()[0]} {s.crossed()[1]:g} is not a limit for it"
    return Finding(comp, item, st, why, source)


def _redfish_new(fmt: str, text: str, source: str) -> list:
    import json

    from helpers.ops import redfishsensors as rs

    doc = json.loads(text)
    if fmt == "redfish-sensor":
        return [_sensor(rs.parse_sensor(doc), source)]
    if fmt == "redfish-sensors":
        return [_sensor(s, source) for s in rs.parse_sensors(doc)] or \
            [Finding("BMC sensors", f"Sensors {doc.get('@odata.id', '')}".strip(), "healthy",
                     "the collection lists no sensors: nothing to judge here", source)]
    if fmt == "redfish-fan":
        f = rs.parse_fan(doc)
        speed = f"{f.speed_RPM:g} RPM" if f.speed_RPM is not None else \
            f"{f.speed_percent:g} %" if f.speed_percent is not None else "no speed"
        return [Finding("fans", f.name, "healthy" if f.state == "Absent" else SAID.get(f.health, "healthy"),
                        "State Absent (an empty bay)" if f.state == "Absent" else
                        f"Health {f.health or 'not reported'}, {speed}" + (f"; {f.note}" if f.note else ""), source)]
    p = rs.parse_power_supply(doc)
    return [Finding("PSUs", p.name, "healthy" if p.state == "Absent" else SAID.get(p.health, "healthy"),
                    "State Absent (an empty bay)" if p.state == "Absent" else
                    (f"Health {p.health}, State {p.state or '?'}" if p.health else "no Status: health not reported") +
                    (f", {p.capacity_W:g} W capacity" if p.capacity_W is not None else "") +
                    (f"; readings in {p.metrics_uri}" if p.metrics_uri else ""), source)]


def findings(fmt: str, text: str, source: str) -> list:
    if fmt.startswith("redfish-"):
        return _redfish_new(fmt, text, source)
    return {"slurm-json": _slurm_json, "nvlink-errors": _nvlink_errors, "dcgmi-nvlink": _dcgmi_nvlink,
            "dcgmi-discovery": _dcgmi_discovery, "gfd-labels": _gfd}[fmt](text, source)
