"""The rules of ``python -m helpers nodecheck``: what each reader's output means for a node's components
(healthy / degraded / failed, and why). One function per format; each returns :class:`Finding` rows.

Verdicts: a BMC reading beyond its non-critical threshold is degraded, beyond critical failed, and an ``na`` sensor
is absent (no finding), not failed; a drained Slurm node is degraded, a down or not-responding one failed; an Xid
whose action (``data/xid.yaml``) is to drain the node is failed, any other Xid degraded; an inactive NVLink, a PCIe
link trained below its capability, a DCGM diagnostic Warn or an incomplete run is degraded, a Fail is failed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

RANK = {"healthy": 0, "degraded": 1, "failed": 2}


@dataclass(frozen=True)
class Finding:
    component: str               # BMC sensors / PSUs / fans / GPUs / NVLink / PCIe / Xid history / Slurm node / K8s node
    item: str
    status: str                  # healthy / degraded / failed
    why: str
    source: str                  # the file it was read from


def _bmc(df, source: str) -> list:
    out = []
    level = {"ok": "healthy", "warning": "degraded", "critical": "failed", "non-recoverable": "failed"}
    for r in df.itertuples():
        if r.status in ("absent", "disabled") or r.reading != r.reading:     # "na": absent, not failed
            said = {"Warning": "degraded", "Critical": "failed"}.get(str(r.bmc_status))
            if said and r.status != "disabled":        # no reading, but the BMC itself marks it (a Redfish Health)
                out.append(Finding("BMC sensors", r.name, said, f"no reading; BMC says {r.bmc_status}", source))
            continue
        unit = str(r.unit).lower()
        comp = "fans" if ("rpm" in unit or "fan" in r.name.lower()) else \
            "PSUs" if (r.name.lower().startswith(("ps", "psu", "power supply")) or unit in ("watts", "volts", "amps")) \
            else "BMC sensors"
        if r.status == "discrete":
            out.append(Finding(comp, r.name, "healthy", f"discrete sensor, state {int(r.reading):#x}", source))
            continue
        limit = r.ucr if r.status != "ok" and r.ucr == r.ucr else r.unc
        why = f"{r.reading:g} {r.unit}" + (f" (threshold {limit:g}; BMC says {r.bmc_status})" if r.status != "ok" else "")
        out.append(Finding(comp, r.name, level[r.status], why, source))
    return out


def _sdr(text: str, source: str) -> list:
    from helpers.ops.ipmiread import parse_ipmitool_sdr

    level = {"ok": "healthy", "warning": "degraded", "critical": "failed", "non-recoverable": "failed"}
    bad_state = ("lost", "fail", "critical", "degraded", "insufficient", "predictive")
    out = []
    for s in parse_ipmitool_sdr(text):
        if s.status == "absent":
            continue                                            # ns / no reading / disabled: absent, not failed
        unit, name = s.unit.lower(), s.name.lower()
        comp = "fans" if ("rpm" in unit or "fan" in name) else \
            "PSUs" if ("watts" in unit or name.startswith(("ps", "power supp", "pwr"))) else "BMC sensors"
        st = level[s.status]
        hit = [a for a in s.asserted if any(w in a.lower() for w in bad_state)]
        if hit and st == "healthy":
            st = "degraded"
        why = (f"{s.reading:g} {s.unit}" if s.reading is not None else s.unit or "-") + \
            (f", BMC status {s.status}" if s.status != "ok" else "") + (f", asserted: {', '.join(hit)}" if hit else "")
        out.append(Finding(comp, s.name, st, why, source))
    return out


def _sel(text: str, source: str) -> list:
    """A fault event still asserted is failed when it is severe (uncorrectable, non-recoverable, a failure), else
    degraded; one the BMC later logged as deasserted is degraded with both times (the part recovered, it was not
    replaced). PSU and fan events count against PSUs and fans, the rest against BMC sensors."""
    from helpers.ops.ipmiread import parse_ipmitool_sel

    bad = ("fail", "critical", "lost", "uncorrectable", "going high", "going low", "predictive", "fault",
           "non-recoverable")
    severe = ("uncorrectable", "non-recoverable", "failure", "failed")
    ev = parse_ipmitool_sel(text)
    out = []
    for i, e in enumerate(ev):
        what = (e.sensor + " " + e.event).lower()
        if e.direction == "Deasserted" or not any(w in what for w in bad):
            continue
        later = next((d for d in ev[i + 1:] if d.direction == "Deasserted" and (d.sensor, d.event) ==
                      (e.sensor, e.event)), None)
        comp = "PSUs" if e.sensor.lower().startswith(("power supply", "ps")) else \
            "fans" if e.sensor.lower().startswith("fan") else "BMC sensors"
        st = "degraded" if later or not any(w in what for w in severe) else "failed"
        why = f"{e.date} {e.time} {e.event} ({e.direction or 'logged'})" + \
            (f", deasserted {later.date} {later.time}" if later else "") + "; clear the SEL once handled"
        out.append(Finding(comp, f"SEL {e.record}: {e.sensor}", st, why, source))
    return out or [Finding("BMC sensors", "SEL", "healthy", f"{len(ev)} events, none a fault", source)]


def _redfish(doc: dict, source: str) -> list:
    from helpers.ops import redfishread as rf

    level = lambda h: {"OK": "healthy", "": "healthy", "Warning": "degraded"}.get(h, "failed")  # noqa: E731
    k = rf.kind(doc)
    if k == "power":
        pw = rf.parse_power(doc)
        return [Finding("PSUs", p.name, level(p.health), f"Health {p.health or '?'}, output "
                        + ("not reported" if p.output_W is None else f"{p.output_W} W"), source)
                for p in pw.supplies if p.state != "Absent"]
    if k == "system":
        s = rf.parse_system(doc)
        return [Finding("BMC sensors", f"system {s.name}", level(s.health_rollup or s.health),
                        f"PowerState {s.power_state}, Health {s.health}, rollup {s.health_rollup}", source)]
    p = rf.parse_processor(doc)
    comp = "GPUs" if p.type in ("GPU", "Accelerator", "FPGA") else "BMC sensors"
    return [Finding(comp, f"{p.type} {p.id} {p.model}".strip(), level(p.health) if p.state != "Absent" else "healthy",
                    f"Health {p.health or '?'}, State {p.state or '?'}", source)]


def _diag(text: str, source: str) -> list:
    from helpers.ops.dcgmread import parse_dcgmi_diag

    rep = parse_dcgmi_diag(text)
    out = []
    for t in rep.tests:
        res = t.result.lower()
        st = "failed" if res.startswith("fail") else "degraded" if res.startswith("warn") else "healthy"
        bad = [g for g, r in t.gpu_results if not r.lower().startswith(("pass", "skip"))]
        why = f"{t.result}" + (f" on {', '.join(bad)}" if bad else "") + (f"; {t.warnings[0][:90]}" if t.warnings else "")
        out.append(Finding("GPUs", f"dcgmi diag {t.test}", st, why, source))
    if not rep.complete:
        out.append(Finding("GPUs", "dcgmi diag", "degraded", "the table stops before its end: the run was cut off; "
                           "rerun dcgmi diag", source))
    return out


def _nvlink(text: str, source: str) -> list:
    from helpers.ops.dcgmread import parse_nvlink_status

    out = []
    links = parse_nvlink_status(text)
    for gpu in dict.fromkeys(lk.gpu for lk in links):
        mine = [lk for lk in links if lk.gpu == gpu]
        if any(lk.link < 0 for lk in mine):
            out.append(Finding("NVLink", gpu, "failed", "NVML: all links inactive (no NVLink: GPU-to-GPU traffic "
                               "falls back to PCIe); reset the GPU, then check the fabric manager", source))
            continue
        down = [lk.link for lk in mine if lk.speed_GBps is None]
        out.append(Finding("NVLink", gpu, "degraded" if down else "healthy",
                           f"links {down} inactive of {len(mine)}" if down else f"{len(mine)} links active"
                           + (" (the paste elides some)" if "[...]" in text else ""), source))
    return out


def _exporter(text: str, source: str) -> list:
    from helpers.core import inputs
    from helpers.ops.dcgmread import parse_prometheus
    from helpers.ops.logs import xid_table

    out, samples = [], parse_prometheus(text)
    for s in samples:
        gpu = f"GPU {s.label('gpu', '?')}" + (f" MIG {s.label('GPU_I_PROFILE')} id {s.label('GPU_I_ID')}"
                                              if s.label("GPU_I_ID") else "") + f" ({s.label('modelName', '?')})"
        if s.name.startswith("DCGM_FI_DEV_XID_ERRORS") or s.name == "DCGM_EXP_XID_ERRORS_COUNT":
            raw = s.label("xid") or (int(s.value) if float(s.value).is_integer() else s.value)
            xid = inputs.number(raw, what=f"{s.name} (an Xid number)", integer=True) if raw else 0
            if xid and s.value:
                act = xid_table()["action"].get(xid, "inspect")
                out.append(Finding("Xid history", gpu, "failed" if act.startswith("drain") else "degraded",
                                   f"{s.name} reports Xid {xid} (action: {act})", source))
            else:
                out.append(Finding("Xid history", gpu, "healthy", f"{s.name} = 0", source))
        elif s.name == "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL" and s.value > 0:
            out.append(Finding("GPUs", gpu, "failed", f"{s.value:g} uncorrectable ECC errors", source))
        elif "NVLINK" in s.name and "ERROR" in s.name and s.value > 0:
            out.append(Finding("NVLink", gpu, "degraded", f"{s.name} = {s.value:g}", source))
        elif s.name in ("DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_PROF_NVLINK_TX_BYTES", "DCGM_FI_DEV_GPU_UTIL"):
            out.append(Finding("NVLink" if "NVLINK" in s.name else "GPUs", gpu, "healthy", f"{s.name} = {s.value:g}",
                               source))
    return out or [Finding("GPUs", "DCGM exporter", "healthy", f"{len(samples)} series, none a fault field", source)]


def _smi(text: str, source: str) -> list:
    from helpers.core.smiparse import parse_query

    out = []
    hard = ("HW Slowdown", "HW Thermal Slowdown", "HW Power Brake Slowdown", "SW Thermal Slowdown")
    for g in parse_query(text).gpus:
        slow = [r for r in g.throttle_active if r in hard]
        pend = g.fields.get("Remapped Rows/Pending") == "Yes"
        failed = g.fields.get("Remapped Rows/Remapping Failure Occurred") == "Yes"
        st = "failed" if failed else "degraded" if (slow or pend) else "healthy"
        why = ("row remapping failed; " if failed else "") + ("row remap pending: reset the GPU; " if pend else "") + \
            (f"clocks held by {', '.join(slow)}" if slow else f"{g.temp_C or '?'} C, {g.perf_state or '?'}")
        out.append(Finding("GPUs", f"{g.bus_id} {g.name}", st, why, source))
    return out


def _slurm(fmt: str, text: str, source: str) -> list:
    from helpers.ops import slurmread

    if fmt == "scontrol-node":
        return [Finding("Slurm node", n.name, *_state(slurmread, n.state, n.reason), source)
                for n in slurmread.parse_scontrol_node(text)]
    return [Finding("Slurm node", f"{r.partition + ' ' if r.partition else ''}{r.nodelist}",
                    *(_state(slurmread, r.state, r.reason) if r.state else slurmread.judge_reason(r.reason)), source)
            for r in slurmread.parse_sinfo(text)]


def _queue(fmt: str, text: str, source: str) -> list:
    from helpers.ops import slurmread

    if fmt == "sshare":
        rows = slurmread.parse_sshare(text)
        return [Finding("Slurm node", "fair share", "healthy", f"{len(rows)} rows (fair share is not a node health "
                        "signal)", source)]
    jobs = slurmread.parse_squeue(text)
    node_trouble = ("ReqNodeNotAvail", "NodeDown", "launch failed requeued held", "JobHeldAdmin")
    bad = [j for j in jobs if any(r in j.reason for r in node_trouble)]
    out = [Finding("Slurm node", f"job {j.job_id}", "degraded", f"pending: {j.reason}", source) for j in bad]
    pend = sorted({j.reason for j in jobs if j.reason})
    return out or [Finding("Slurm node", "queue", "healthy", f"{len(jobs)} jobs; pending reasons: "
                           f"{', '.join(pend) or 'none'}", source)]


def _state(slurmread, state: str, reason: str) -> tuple:
    v, why = slurmread.judge_state(state)
    return v, f"{state}: {why}" + (f"; reason: {reason}" if reason else "")


def _pci(text: str, source: str) -> list:
    from helpers.ops.pcinode import parse_lspci

    out = []
    for d in parse_lspci(text):
        item = f"{d.address} {d.description[:50]}".strip()
        if d.aer_uncorrectable:
            out.append(Finding("PCIe", item, "failed", f"AER uncorrectable: {', '.join(d.aer_uncorrectable)}", source))
        if d.downgraded or d.aer_correctable:
            out.append(Finding("PCIe", item, "degraded", "; ".join(
                ([f"link trained below capability: {', '.join(d.downgraded)} (re-check under load: idle GPUs "
                  "drop to Gen1)"] if d.downgraded else []) +
                ([f"AER correctable: {', '.join(d.aer_correctable)}"] if d.aer_correctable else [])), source))
        if not (d.downgraded or d.aer_correctable or d.aer_uncorrectable):
            link = f"{d.sta_speed_GTps:g} GT/s x{d.sta_width}" if d.sta_speed_GTps else "no link status printed"
            out.append(Finding("PCIe", item, "healthy", link, source))
    return out


def _k8s(text: str, source: str) -> list:
    from helpers.ops.k8snode import parse_describe_node

    n = parse_describe_node(text)
    name, out = n.name or "node", []
    for typ, status, reason, msg in n.conditions:
        bad = (typ == "Ready" and status != "True") or (typ != "Ready" and status == "True")
        out.append(Finding("K8s node", f"{name} {typ}", ("failed" if typ == "Ready" else "degraded") if bad else
                           "healthy", f"{status} ({reason})", source))
    for t in n.taints:
        out.append(Finding("K8s node", f"{name} taint", "failed" if "unreachable" in t or "not-ready" in t else
                           "healthy", t + (" (the GPU taint: only pods that tolerate it land here)"
                                           if t.startswith("nvidia.com/gpu") else ""), source))
    if n.unschedulable:
        out.append(Finding("K8s node", name, "degraded", "cordoned (Unschedulable: true)", source))
    for res, (cap, alloc) in n.gpu_resources().items():
        short = cap is not None and alloc is not None and alloc < cap
        out.append(Finding("K8s node", f"{name} {res}", "degraded" if short else "healthy",
                           f"capacity {cap}, allocatable {alloc}" + (": the device plugin marks GPUs unhealthy"
                                                                      if short else ""), source))
    return out


def _xid(text: str, source: str) -> list:
    from helpers.ops.logs import xid_events

    ev = xid_events(text)
    out = []
    for (pci, xid), g in ev.groupby(["pci", "xid"], sort=True):
        act = g["action"].iloc[0]
        out.append(Finding("Xid history", f"GPU {pci}", "failed" if act.startswith("drain") else "degraded",
                           f"{len(g)}x Xid {xid} {g['name'].iloc[0]} (action: {act})", source))
    return out or [Finding("Xid history", "kernel log", "healthy", "no Xid lines", source)]


def findings(fmt: str, text: str, source: str) -> list:
    from helpers.ops import bmc

    if fmt == "ipmitool-sensor":
        return _bmc(bmc.parse_ipmitool_sensor(text), source)
    if fmt == "redfish-thermal":
        return _bmc(bmc.parse_redfish_thermal(json.loads(text)), source)
    if fmt in ("redfish-power", "redfish-system", "redfish-processor"):
        return _redfish(json.loads(text), source)
    if fmt in ("sinfo", "scontrol-node"):
        return _slurm(fmt, text, source)
    if fmt in ("squeue", "sshare"):
        return _queue(fmt, text, source)
    return {"ipmitool-sdr": _sdr, "ipmitool-sel": _sel, "dcgmi-diag": _diag, "nvlink-status": _nvlink, "dcgm-exporter": _exporter, "nvidia-smi-q": _smi,
            "lspci": _pci, "kubectl-describe-node": _k8s, "dmesg-xid": _xid}[fmt](text, source)
