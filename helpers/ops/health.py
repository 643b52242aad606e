"""Node health checks built on the helpers (driver, GPU count, NVLink, InfiniBand ports, disk, clocks, Xid in the
kernel log), an inspection report, and a self-healing rule that drains a node in Slurm when a check fails and
resumes it when all pass (chapter 27).

Every check reads the machine through a path that a test can replace — ``sysfs`` for InfiniBand ports, ``kernel_log``
for dmesg text, ``nvml`` for the GPU — so a planted fault (a port DOWN, an Xid 79 line) is found by the same code that
runs on a real node. A check with nothing to check (no GPU expected) is ``skipped``, never a silent pass.

    from helpers.ops import health
    results = health.run_checks(health.Expect(gpus=8, nvlink_links=18, ib_ports=8))
    health.report(results)                        # Markdown table for the inspection report
    python -m helpers health check --expect-gpus 8 --records-json   # what the Ansible role runs on every node
"""
from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

SYSFS = "/sys/class/infiniband"
CRITICAL = ("driver", "gpu_count", "xid", "nvlink", "ib_ports")


@dataclass(frozen=True)
class Expect:
    gpus: int = 0
    nvlink_links: int = 0            # active links per GPU (H100/H200 SXM: 18)
    ib_ports: int = 0                # ACTIVE InfiniBand ports on the node
    disk_path: str = "/"
    min_disk_free_GB: float = 1.0
    max_sm_clock_MHz: int = 0        # expected max SM clock (0: do not check)


@dataclass(frozen=True)
class CheckResult:
    name: str
    status: str                      # ok / fail / skipped
    value: str
    expected: str
    critical: bool


def _gpus(nvml) -> list[dict]:
    from helpers.core.nvmlquery import nvml_gpus
    return nvml_gpus(nvml)[0] if nvml is not None else []


def ib_port_states(sysfs: str | Path = SYSFS) -> dict[str, str]:
    """{"mlx5_0/1": "ACTIVE", …} from ``<sysfs>/<hca>/ports/<n>/state`` (which reads like ``4: ACTIVE``)."""
    from helpers.core import inputs

    base = Path(sysfs)
    out = {}
    if base.is_dir():
        for i, state in enumerate(sorted(base.glob("*/ports/*/state"))):
            if i >= 4096:
                raise inputs.BadInput(f"{sysfs}: more than 4096 port state files: not an InfiniBand sysfs tree")
            text = inputs.read_text(state, what="IB port state", max_bytes=4096, max_rows=4)   # no FIFO, no device
            out[f"{state.parts[-4]}/{state.parts[-2]}"] = text.strip().split(":")[-1].strip()
    return out


def read_kernel_log(timeout_s: float = 10.0) -> str | None:
    """dmesg text, or None when it cannot be read (no permission in a container)."""
    if shutil.which("dmesg") is None:
        return None
    from helpers.core import inputs

    p = inputs.run_program(["dmesg"], timeout_s=timeout_s)       # killed past the limit: ProgramFailed, exit 1
    return p.stdout if p.returncode == 0 else None


def run_checks(expect: Expect, nvml="auto", sysfs: str | Path = SYSFS,
               kernel_log: str | None = "auto") -> list[CheckResult]:
    from helpers.core.nvmlquery import load_nvml
    from helpers.ops import logs

    if nvml == "auto":
        nvml, _ = load_nvml()
    if kernel_log == "auto":
        kernel_log = read_kernel_log()
    res: list[CheckResult] = []

    def add(name, ok, value, expected, skipped=False):
        res.append(CheckResult(name, "skipped" if skipped else ("ok" if ok else "fail"), str(value), str(expected),
                               name in CRITICAL))

    gpus = _gpus(nvml)
    if expect.gpus == 0 and nvml is None:
        add("driver", True, "no NVML", "none expected", skipped=True)
    else:
        from helpers.core.nvmlquery import ask, text
        drv = text(ask(nvml.nvmlSystemGetDriverVersion)[0]) if nvml is not None else None
        add("driver", drv is not None, drv or "NVML not loaded", "NVIDIA driver loaded")
    add("gpu_count", len(gpus) == expect.gpus, len(gpus), expect.gpus, skipped=expect.gpus == 0 and not gpus)
    if expect.nvlink_links:
        low = [g["index"] for g in gpus if g.get("nvlink_links_active", 0) < expect.nvlink_links]
        add("nvlink", not low and bool(gpus), f"GPUs below: {low}" if low else "all GPUs", f"{expect.nvlink_links} links/GPU")
    else:
        add("nvlink", True, "-", "not expected", skipped=True)
    ports = ib_port_states(sysfs)
    active = sum(s == "ACTIVE" for s in ports.values())
    down = [p for p, s in ports.items() if s != "ACTIVE"]
    add("ib_ports", active >= expect.ib_ports and not down, f"{active} ACTIVE" + (f", not active: {down}" if down else ""),
        f"{expect.ib_ports} ACTIVE", skipped=expect.ib_ports == 0 and not ports)
    free_GB = shutil.disk_usage(expect.disk_path).free / 1e9
    add("disk", free_GB >= expect.min_disk_free_GB, f"{free_GB:.1f} GB free on {expect.disk_path}",
        f"≥ {expect.min_disk_free_GB:g} GB")
    if expect.max_sm_clock_MHz and gpus:
        slow = [g["index"] for g in gpus if g.get("clock_sm_max_MHz", 0) < expect.max_sm_clock_MHz]
        add("clocks", not slow, f"GPUs below: {slow}" if slow else "all GPUs", f"max SM clock {expect.max_sm_clock_MHz} MHz")
    else:
        add("clocks", True, "-", "not checked", skipped=True)
    if kernel_log is None:
        add("xid", True, "kernel log not readable here", "no hardware Xid", skipped=True)
    else:
        ev = logs.xid_events(kernel_log)
        hard = ev[ev["action"].isin(["drain_reset", "drain_rma"])]
        add("xid", hard.empty, ", ".join(f"Xid {x} on {p}" for x, p in zip(hard.xid, hard.pci)) or "none",
            "no hardware Xid")
    return res


def healthy(results: list[CheckResult]) -> bool:
    return all(r.status != "fail" for r in results if r.critical) and all(r.status != "fail" for r in results)


def report(results: list[CheckResult], node: str = "") -> str:
    """The inspection report: one Markdown table per node."""
    lines = [f"### {node or 'node'}: {'healthy' if healthy(results) else 'UNHEALTHY'}", "",
             "| check | status | value | expected |", "|---|---|---|---|"]
    lines += [f"| {r.name} | {r.status} | {r.value} | {r.expected} |" for r in results]
    return "\n".join(lines) + "\n"


def heal(cluster, results: list[CheckResult], prefix: str = "health:") -> str:
    """One step of the self-healing rule on a ``helpers.ops.slurm.Cluster``: drain on failure, resume on recovery.
    Only a drain this rule set (reason starting with ``prefix``) is ever resumed: a human's drain stays."""
    state, reason = cluster.node_state()
    failed = [r.name for r in results if r.status == "fail"]
    drained = "drain" in state
    if failed and not drained:
        cluster.drain(f"{prefix} {','.join(failed)} failed")
        return f"drained ({', '.join(failed)} failed)"
    if not failed and drained and reason.startswith(prefix):
        cluster.resume()
        return "resumed (all checks pass)"
    if failed:
        return f"still drained ({reason})"
    return "no action (healthy)" if not drained else f"left drained by someone else ({reason})"


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results as results_mod

    ap = argparse.ArgumentParser(prog="python -m helpers health", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="run the node health checks")
    c.add_argument("--expect-gpus", type=cli.bounded_int(0, 64), default=0)
    c.add_argument("--expect-nvlink-links", type=cli.bounded_int(0, 64), default=0)
    c.add_argument("--expect-ib-ports", type=cli.bounded_int(0, 64), default=0)
    c.add_argument("--min-disk-free-GB", type=cli.bounded_float(0, 1e6), default=1.0)
    c.add_argument("--sysfs", type=cli.nonempty_path, default=SYSFS, help="InfiniBand sysfs root (a test can plant one)")
    c.add_argument("--kernel-log", type=cli.nonempty_path, default=None, help="a dmesg text file instead of dmesg")
    c.add_argument("--records-json", action="store_true",
                   help="print only {healthy, records} as JSON, without provenance (what the Ansible role reads)")
    results_mod.add_output_args(c)
    args = ap.parse_args(argv)
    if args.sysfs != SYSFS and not Path(args.sysfs).is_dir():      # a typo must not read as "no IB ports here"
        ap.error(f"--sysfs {args.sysfs!r} is not a folder: give an InfiniBand sysfs root like {SYSFS}")
    from helpers.core import inputs

    log = inputs.read_text(args.kernel_log, what="kernel log") if args.kernel_log else "auto"
    res = run_checks(Expect(args.expect_gpus, args.expect_nvlink_links, args.expect_ib_ports,
                            min_disk_free_GB=args.min_disk_free_GB), sysfs=args.sysfs, kernel_log=log)
    if args.records_json:
        import json

        print(json.dumps({"healthy": healthy(res), "records": [results_mod.to_dict(r) for r in res]}))
    else:
        results_mod.emit(res, "node-health", args, healthy=healthy(res))
    return 0 if healthy(res) else 3


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
