"""Chapter 01 (GPU cluster overview): machine reports side by side, a fleet check, engine speed-ups, and the
cluster-sizing toy.

    from helpers.figures import overview
    rec = overview.recorded("h200/device")                 # the recorded document, or None and a printed note
    overview.compare_reports({"this machine": device.detect(),
                              "recorded H200": overview.report_from_dict(rec["records"][0])})
    overview.speedups(backends.compare("matmul", 1024))    # each engine against torch on the CPU
    overview.size_jobs({"7B": 7e9}, [1e12], ["H200 SXM"], mfu=0.4, days=30)

The fleet check is also a CLI, for the reports ``srun`` collects from every node (chapter 01, "Going to scale"):

    srun --ntasks-per-node=1 bash -c 'python -m helpers device --out reports/$(hostname).json'
    python -m helpers overview fleet reports/*.json         # exit status 1 when the nodes disagree

Sizing uses ``helpers.formulas.flops`` (6·N·D FLOPs), ``helpers.training.calc.perfmodel`` (GPUs at an MFU) and the
datasheet peaks of ``helpers.core.specs``.
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from typing import Any

from helpers.core import device, measurements, specs, topology
from helpers.formulas import flops
from helpers.training.calc import perfmodel


# ---------------------------------------------------------------- recorded reports

def recorded(name: str) -> dict[str, Any] | None:
    """The recorded document ``name`` (e.g. "h200/backends"), or None after printing why there is none."""
    if name not in measurements.available():
        print(f"note: no recorded measurement {name!r} yet (recorded: {measurements.available()}); "
              "only the live result is shown. Record it with `make record-h200` on the H200.")
        return None
    return measurements.load(name)


def report_from_dict(d: dict[str, Any]) -> device.DeviceReport:
    """Rebuild a DeviceReport from its JSON form (``python -m helpers device --json`` or a recorded record)."""
    missing = {"os", "python", "cpu", "gpus"} - set(d)
    if missing:
        raise ValueError(f"not a device report: missing {sorted(missing)}; "
                         "pass the output of `python -m helpers device --json` or a record of h200/device")
    gpus = tuple(device.GPUInfo(**{**g, "sources": tuple(g.get("sources", ())),
                                   "unavailable": tuple(g.get("unavailable", ()))}) for g in d["gpus"])
    topo = d.get("topology")
    if topo is not None:
        topo = topology.Topology(tuple(topo["devices"]), tuple(tuple(r) for r in topo["matrix"]),
                                 tuple(topo["cpu_affinity"]), tuple(topo["numa_affinity"]),
                                 tuple(tuple(x) for x in topo.get("nic_names", ())))
    return device.DeviceReport(
        os=d["os"], python=d["python"], cpu=device.CPUInfo(**d["cpu"]), torch_version=d.get("torch_version"),
        torch_cuda=d.get("torch_cuda"), driver_version=d.get("driver_version"),
        cuda_driver_version=d.get("cuda_driver_version"), nccl_version=d.get("nccl_version"),
        cupy=d.get("cupy", "?"), gpus=gpus, reason=d.get("reason"), topology=topo, notes=tuple(d.get("notes", ())))


def _as_report(r: device.DeviceReport | dict) -> device.DeviceReport:
    return r if isinstance(r, device.DeviceReport) else report_from_dict(r)


def _rows(r: device.DeviceReport) -> dict[str, str]:
    gib = lambda b: f"{b / 2**30:.1f}" if b else "?"  # noqa: E731
    g = r.gpus[0] if r.gpus else None
    gpu = lambda f: "—" if g is None else str(getattr(g, f))  # noqa: E731
    return {
        "CPU": r.cpu.model,
        "CPU cores (logical)": str(r.cpu.cores_logical),
        "host RAM (GiB)": gib(r.cpu.ram_bytes),
        "NUMA nodes": str(r.cpu.numa_nodes),
        "GPUs": f"{len(r.gpus)} × {g.name}" if g else "none",
        "GPU memory (GiB)": gib(g.memory_total_bytes) if g else "—",
        "SMs per GPU": gpu("sm_count"),
        "compute capability": gpu("compute_capability"),
        "max SM clock (MHz)": gpu("clock_sm_max_MHz"),
        "power limit (W)": gpu("power_limit_W"),
        "host link": f"PCIe gen {g.pcie_gen} x{g.pcie_width}" if g else "—",
        "NVLink links active": gpu("nvlink_links_active"),
        "MIG": gpu("mig_mode"),
        "driver": str(r.driver_version),
        "torch": str(r.torch_version),
        "CUDA (torch build)": str(r.torch_cuda),
        "NCCL": str(r.nccl_version),
        "cupy": r.cupy,
    }


def compare_reports(reports: dict[str, device.DeviceReport | dict]):
    """A table, one column per labelled report, one row per field: what differs between two machines."""
    import pandas as pd

    cols = {label: _rows(_as_report(r)) for label, r in reports.items()}
    df = pd.DataFrame(cols)
    df.index.name = "field"
    return df


# ---------------------------------------------------------------- fleet check (Going to scale)

_FLEET_FIELDS = ("driver", "torch", "CUDA (torch build)", "NCCL", "GPUs", "GPU memory (GiB)")


def fleet_check(reports: dict[str, device.DeviceReport | dict]) -> list[str]:
    """Fields on which the nodes of a cluster disagree, one sentence each (empty list: a uniform fleet).

    A distributed job needs one driver, one NCCL and one GPU model everywhere; a GPU whose PCIe link trained
    at x8 instead of x16 shows up here too, because every GPU's link is compared, not only the first."""
    if len(reports) < 2:
        raise ValueError(f"fleet_check needs reports from ≥ 2 nodes, got {len(reports)}")
    seen: dict[str, dict[str, list[str]]] = {f: {} for f in (*_FLEET_FIELDS, "PCIe links")}
    for node, rep in reports.items():
        r = _as_report(rep)
        rows = _rows(r)
        for f in _FLEET_FIELDS:
            seen[f].setdefault(rows[f], []).append(node)
        links = ", ".join(f"GPU{g.index} gen{g.pcie_gen} x{g.pcie_width}" for g in r.gpus) or "no GPUs"
        seen["PCIe links"].setdefault(links, []).append(node)
    problems = []
    for f, values in seen.items():
        if len(values) > 1:
            parts = sorted(values.items(), key=lambda kv: -len(kv[1]))
            problems.append(f"{f} not uniform: " + "; ".join(f"{v!r} on {', '.join(sorted(n))}" for v, n in parts))
    return problems


def _load_report(path: str) -> tuple[str, dict]:
    """(host, report) of a ``device --out`` document: the host its provenance names, never the file's name."""
    from helpers.core import inputs

    doc = inputs.read_json(path, what="device report", allow_nan=True, max_bytes=64 * 2**20)
    rec = doc.get("records") if isinstance(doc, dict) else None
    rec = rec[0] if isinstance(rec, list) and rec else doc       # a plain `device --json` report: no host
    if not isinstance(rec, dict) or "gpus" not in rec:
        raise inputs.BadInput(f"device report {path!r} is not a device report: write each node's with "
                              "`python -m helpers device --out FILE`")
    host = doc["provenance"].get("host") if isinstance(doc.get("provenance"), dict) else None
    if not isinstance(host, str) or not host.strip():
        raise inputs.BadInput(f"device report {path!r} does not name its host (no provenance.host; `device --json` "
                              "prints none): write each node's with `python -m helpers device --out FILE`")
    return host, rec


# ---------------------------------------------------------------- CPU vs GPU engines

def speedups(records, baseline: str = "torch-cpu"):
    """Engine results (helpers.compute.backends) as a table with each engine's speed-up over ``baseline`` per work."""
    import pandas as pd

    from helpers.core import results

    df = results.table(records, ["work", "n", "engine", "time_s", "gflops", "bw_GBps"])
    if df.empty:
        raise ValueError("no engine records to compare")
    base = df[df.engine == baseline].set_index("work")["time_s"]
    if base.empty:
        raise ValueError(f"baseline engine {baseline!r} is not among {sorted(df.engine.unique())}")
    df[f"speedup_vs_{baseline}"] = [base.get(w, math.nan) / t for w, t in zip(df.work, df.time_s)]
    return df.reset_index(drop=True).pipe(pd.DataFrame)


def engines_figure(live, recorded=None, live_label: str = "this machine", recorded_label: str = "recorded H200"):
    """GFLOP/s per engine for each kind of work (log scale): live bars next to recorded ones."""
    from helpers.core import plotting, results

    fig = plotting.figure(title="The same work on each engine", yaxis_title="GFLOP/s (10^9 FLOP/s, log scale)",
                          barmode="group")
    for label, recs, colour in ((live_label, live, plotting.LIVE), (recorded_label, recorded, plotting.RECORDED)):
        if recs:
            df = results.table(recs)
            fig.add_bar(x=[f"{w} · {e}" for w, e in zip(df.work, df.engine)], y=df.gflops, name=label,
                        marker_color=colour, hovertemplate="%{x}: %{y:.3g} GFLOP/s<extra>" + label + "</extra>")
    fig.update_yaxes(type="log")
    return fig


def limits_table(records, spec, gpu_engine: str = "torch-cuda", cpu_engine: str = "torch-cpu",
                 passes: dict[str, int] | None = None):
    """Why the GPU/CPU ratio differs by work: each work's GPU rate as a share of the datasheet limit that binds it
    (FP32 peak for matmul, memory bandwidth for elementwise) and the GPU ÷ CPU ratio.

    ``passes``: how many times the implementation sweeps memory. helpers.compute.backends counts compulsory traffic
    (read x, write y), but ``y = a*x + b`` runs as two kernels (multiply into y, then add in place), so the
    memory really moves twice that: passes={"elementwise": 2} (the default)."""
    import pandas as pd

    passes = {"elementwise": 2} if passes is None else passes
    by = {(r["work"], r["engine"]) if isinstance(r, dict) else (r.work, r.engine): r for r in records}
    get = lambda r, k: r[k] if isinstance(r, dict) else getattr(r, k)  # noqa: E731
    rows = []
    for work in ("matmul", "elementwise"):
        g, c = by.get((work, gpu_engine)), by.get((work, cpu_engine))
        if g is None or c is None:
            continue
        k = passes.get(work, 1)
        if work == "matmul":
            limit, unit = spec.fp32_tflops * 1e3, "FP32 peak (GFLOP/s)"
            gpu_rate, cpu_rate = get(g, "gflops"), get(c, "gflops")
        else:
            limit, unit = spec.hbm_GBps, "memory bandwidth (GB/s)"
            gpu_rate, cpu_rate = k * get(g, "bw_GBps"), k * get(c, "bw_GBps")
        rows.append({"work": work, "bound by": unit, f"{gpu_engine} achieved": gpu_rate,
                     "datasheet limit": limit, "share of limit": gpu_rate / limit,
                     f"{cpu_engine} achieved": cpu_rate, "GPU ÷ CPU": gpu_rate / cpu_rate})
    return pd.DataFrame(rows)


def kernel_table(roof, kernels):
    """Each kernel's arithmetic intensity, the roofline's ridge for its dtype, which limit binds, and the
    attainable rate on ``roof`` (a helpers.compute.roofline.Roofline)."""
    import pandas as pd

    return pd.DataFrame([{"kernel": k.name, "dtype": k.dtype, "intensity_flop_per_byte": k.intensity,
                          "ridge_flop_per_byte": roof.ridge(k.dtype), "bound": k.bound(roof),
                          "attainable_tflops": roof.attainable_tflops(k.intensity, k.dtype)} for k in kernels])


# ---------------------------------------------------------------- cluster-sizing toy

@dataclass(frozen=True)
class Sizing:
    model: str
    n_params: float
    n_tokens: float
    gpu: str
    peak_bf16_tflops: float
    mfu: float
    days: float
    total_flops: float
    gpus_needed: float         # fractional, from perfmodel.gpus_needed
    gpus_whole_nodes: int      # rounded up to whole 8-GPU servers
    gpu_hours: float


def size_jobs(models: dict[str, float], tokens: list[float], gpus: list[str], mfu: float = 0.4,
              days: float = 30.0, gpus_per_node: int = 8) -> list[Sizing]:
    """GPUs needed to train each model (parameters) on each token count in ``days`` at ``mfu`` of the dense
    BF16 datasheet peak of each GPU. 6·N·D FLOPs; no memory or network limits (chapter 28 adds them)."""
    out = []
    for gname in gpus:
        spec = specs.lookup(gname)
        if spec is None or not spec.bf16_tflops:
            raise ValueError(f"GPU {gname!r} has no BF16 peak in the spec table; known: "
                             f"{[s.name for s in specs.all_specs() if s.bf16_tflops]}")
        for name, n in models.items():
            for d in tokens:
                f = flops.training_flops(n, d)
                need = perfmodel.gpus_needed(f, days, spec.bf16_tflops, mfu)
                whole = math.ceil(need / gpus_per_node) * gpus_per_node
                out.append(Sizing(name, n, d, spec.name, spec.bf16_tflops, mfu, days, f, need, whole,
                                  need * days * 24))
    return out


def sizing_figure(n_params: float, n_tokens: float, gpus: list[str], mfu: float = 0.4, days=(7, 14, 30, 60, 90, 180)):
    """GPUs needed against the days allowed, one line per GPU type (log-log: halving the time doubles the GPUs)."""
    from helpers.core import plotting

    fig = plotting.figure(title=f"{n_params / 1e9:g}B parameters, {n_tokens / 1e12:g}T tokens, MFU {mfu:.0%}",
                          xaxis_title="days allowed", yaxis_title="GPUs needed")
    for i, gname in enumerate(gpus):
        rows = [size_jobs({"m": n_params}, [n_tokens], [gname], mfu, d)[0] for d in days]
        fig.add_scatter(x=list(days), y=[r.gpus_needed for r in rows], mode="lines+markers", name=rows[0].gpu,
                        line=dict(color=plotting.COLORS[i % len(plotting.COLORS)]))
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log")
    return fig


# ---------------------------------------------------------------- CLI

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers overview", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    fl = sub.add_parser("fleet", help="compare device reports from several nodes; exit 1 if they disagree")
    fl.add_argument("files", nargs="+", help="JSON from `python -m helpers device --out`, one per node")
    a = ap.parse_args(argv)
    reports, files = {}, {}
    for f in a.files:                      # keyed by the host each report names, never by its file name
        host, rep = _load_report(f)
        if host in reports:
            raise ValueError(f"{files[host]!r} and {f!r} are both reports of host {host!r}: give one report "
                             "per node (the same node collected twice, or two nodes with one hostname?)")
        reports[host], files[host] = rep, f
    if len(reports) < 2:
        ap.error(f"fleet needs reports from ≥ 2 nodes, got {len(reports)} file(s)")
    problems = fleet_check(reports)
    print("\n".join(problems) if problems else f"fleet check: {len(reports)} nodes agree on "
          f"{', '.join(_FLEET_FIELDS)} and every GPU's PCIe link")
    return 1 if problems else 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
