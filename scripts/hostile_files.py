"""Hostile FILES, outputs and helper programs for every reader (issue 28 item 3): the kinds ``hostile_inputs.py``
tries with ``--kinds files`` (or ``all``).

Kinds: a FIFO as input (blocks forever if opened), ``/dev/zero`` as input (never ends), a 1e6-row file, a folder as
a file, ``--out`` equal to the input (must not overwrite it), ``--out`` at a FIFO or a socket in the temp folder
(stands in for /dev/null: must stay what it is), NaN / inf / negative values and non-ASCII digits in parsed output,
a sleeping / flooding / garbage fake helper program on PATH (nvidia-smi, promtool, ncu), a crafted pickle
checkpoint (its marker file must NOT appear), and names that are globs or paths (``ibdiag --sample``).

Each case: (tool, kind, argv with {placeholders}, expected exit codes, files that must stay untouched). Placeholders
are made in the case's fresh working folder: {fifo} {dir} {sock} {in} {rows} {bad} {ckdir}; {bin} is put first on PATH;
{w} is the folder itself and {f:REL} a file of the case's own ``files`` ({REL: text}). A case whose ``ok`` holds 0
expects the right answer (``stdout_has``), not an error: a look-alike that must not count, two files of one name.
"""
from __future__ import annotations

import json
import os
import pickle
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "real"
FABRIC = ROOT / "helpers" / "network" / "data" / "ib" / "fabric.yaml"
XID = "[  1.0] NVRM: Xid (PCI:0000:01:00): {}, pid=1, name=x\n"
MEM_CAP_BYTES = 6 * 2**30          # RLIMIT_AS of each case: a runaway read fails instead of taking the machine

NCCL_ROW = "     1048576        262144     float     sum      -1    85.58   12.25   22.97      0    84.50   12.41   23.27      0\n"
NCCL_HEAD = "# Using devices\n#  Rank  0 Group  0 Pid 1 on h device  0 [0x0f] NVIDIA A100-SXM4-40GB\n"
NCU_HEAD = '"ID","Process ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'

# tool -> (argv with {in} as the input, the valid input's text or source file, a 1e6-row body, bad-values text)
READERS = {
    "nccltests": (["{in}"], REAL / "nccl-tests" / "oci-oke-a100-2node-allreduce.txt", NCCL_HEAD + NCCL_ROW * 10**6,
                  {"nan": NCCL_HEAD + NCCL_ROW.replace("85.58", "nan"),
                   "inf": NCCL_HEAD + NCCL_ROW.replace("22.97", "inf"),
                   "negative": NCCL_HEAD + NCCL_ROW.replace("85.58", "-85.58"),
                   "non-ascii digits": NCCL_HEAD + NCCL_ROW.replace("1048576", "１０４８５７６")}),
    "iperf": (["--parse", "{in}"], REAL / "iperf3" / "recorded-here-iperf-3.12-tcp-P1.json",
              "[\n" + "1,\n" * 10**6 + "1]\n",
              {"nan": "NaN", "inf": "Infinity", "negative": "-5.0e9"}),
    "mlperf": (["{in}"], None, '{"records": [\n' + '{"kind": "x"},\n' * 10**6 + "{}]}\n",
               {"nan": '{"records": [{"kind": "gemm", "time_s": NaN, "repeats": 10}], "provenance": {}}',
                "inf": '{"records": [{"kind": "gemm", "time_s": Infinity, "repeats": 10}], "provenance": {}}',
                "negative": '{"records": [{"kind": "gemm", "time_s": -1.0, "repeats": 10}], "provenance": {}}'}),
    "ibdiag": (["--sample", "healthy", "--inventory", "{in}"], FABRIC,
               "switches:\n" + "- {name: s, lid: 1}\n" * 10**6,
               {"malformed": "switches: [1, 2\n",
                "nan": FABRIC.read_text().replace("rate_Gbps: 400", "rate_Gbps: .nan"),
                "empty name": FABRIC.read_text().replace("{name: spine01,", '{name: "",'),
                "empty number": FABRIC.read_text().replace("leaf_port: 9}", 'leaf_port: ""}')}),
    "health": (["check", "--kernel-log", "{in}"], REAL / "dmesg-xid" / "tinygrad-6947-xid31.txt",
               XID.format(31) * 10**6, {}),
    "ncclenv": (["--lint", "{in}"], "export NCCL_DEBUG=INFO\n", "export NCCL_DEBUG=INFO\n" * 10**6, {}),
    "ncu": (["parse", "{in}"], REAL / "ncu" / "ncu_softmax_h200.csv",
            NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","1,024"\n' * 10**6,
            {"nan": NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","nan"\n',
             "negative": NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","-1,024"\n',
             "inf": NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","inf"\n',
             "decimal comma": NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","1,5"\n',
             "non-ascii digits": NCU_HEAD + '"0","1","k","dram__bytes.sum","byte","１０２４"\n'}),
    "overview": (["fleet", "{in}", "{in2}"], None, "[\n" + "1,\n" * 10**6 + "1]\n", {"malformed": "{not json"}),
    "nodecheck": (["{in}"], REAL / "redfish" / "telegraf-dell-idrac-thermal.json",
                  "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" + "gpu*         up   infinite      1   idle gpu01\n" * 10**6,
                  {"nan": '{"@odata.type": "#Thermal.v1_4_0.Thermal", "Temperatures": [{"Name": "CPU1 Temp", '
                          '"ReadingCelsius": NaN, "Status": {"Health": "OK", "State": "Enabled"}}]}',
                   "negative": '{"@odata.type": "#Power.v1_5_0.Power", "PowerControl": [{"PowerConsumedWatts": -5}], '
                               '"PowerSupplies": []}'}),
}
HAS_OUT = {"nccltests", "iperf", "mlperf", "ibdiag", "health", "ncu", "nodecheck"}


def _valid(tool: str) -> str:
    src = READERS[tool][1]
    if tool == "mlperf":
        return '{"records": [{"kind": "gemm", "time_s": 0.001, "repeats": 10}], "provenance": {"device": "x"}}\n'
    if tool == "overview":
        return '{"gpus": [], "cpu": {"model": "x"}}\n'
    return src.read_text() if isinstance(src, Path) else src


def cases() -> list[dict]:
    out = []
    for tool, (argv, _src, _rows, bad) in READERS.items():
        def add(kind, args, ok=(2,), keep=(), **kw):
            out.append({"tool": tool, "kind": kind, "argv": list(args), "ok": set(ok), "keep": list(keep), **kw})
        sub = lambda p: [a.replace("{in}", p).replace("{in2}", p) for a in argv]   # noqa: E731
        add("FIFO input", sub("{fifo}"))
        add("/dev/zero input", sub("/dev/zero"))
        add("1e6-row file", sub("{rows}"))
        add("folder as file", sub("{dir}"))
        for what in bad:
            add(f"bad values: {what}", sub("{bad:" + what + "}"), ok=(2,))
        if tool in HAS_OUT:
            add("--out = input", [*argv, "--out", "{in}"], keep=["{in}"])
            add("--out = hard link of input", [*argv, "--out", "{link}"], keep=["{in}"])
            add("--out at a FIFO", [*argv, "--out", "{fifo}"], keep=["{fifo}"])
            add("--out at a socket", [*argv, "--out", "{sock}"], keep=["{sock}"])
    for tool in ("hardware", "memory"):
        out.append({"tool": tool, "kind": "--out at a FIFO", "argv": ["--out", "{fifo}"], "ok": {2}, "keep": ["{fifo}"]})
    out += [
        {"tool": "ibdiag", "kind": "glob name", "argv": ["--sample", "*"], "ok": {2}, "keep": []},
        {"tool": "ibdiag", "kind": "path name", "argv": ["--sample", "../ib/healthy"], "ok": {2}, "keep": []},
        {"tool": "ncclenv", "kind": "two assignments on a line", "argv": ["--lint", "{bad:two}"], "ok": {1},
         "keep": [], "stdout_has": "NCCL_ALGO", "bad": {"two": "export FOO=1 NCCL_ALGO=bogus\n"}},
        {"tool": "ncclenv", "kind": "export after ;", "argv": ["--lint", "{bad:semi}"], "ok": {1},
         "keep": [], "stdout_has": "NCCL_PROTO", "bad": {"semi": "cd /x; export NCCL_PROTO=bogus\n"}},
        # right answers (ok holds 0): a look-alike Xid in Arabic-Indic digits is no Xid, so no drain; two folders'
        # report.json are two nodes (keyed by the host each report names, never by the file's name)
        {"tool": "health", "kind": "non-ascii digits in an Xid", "argv": ["check", "--kernel-log", "{bad:xid}",
         "--records-json"], "ok": {0, 3}, "keep": [], "stdout_has": '"name": "xid", "status": "ok", "value": "none"',
         "bad": {"xid": XID.format("\u0667\u0669")}},
        {"tool": "overview", "kind": "two report.json of two hosts", "argv": ["fleet", "{f:a/report.json}",
         "{f:b/report.json}"], "ok": {0}, "keep": [], "stdout_has": "2 nodes agree",
         "files": {"a/report.json": _device_doc("nodeA"), "b/report.json": _device_doc("nodeB")}},
        {"tool": "overview", "kind": "two reports of one host", "argv": ["fleet", "{f:a.json}", "{f:b.json}"],
         "ok": {2}, "keep": [], "files": {"a.json": _device_doc("nodeA"), "b.json": _device_doc("nodeA")}},
        {"tool": "overview", "kind": "report naming no host", "argv": ["fleet", "{f:a.json}", "{f:b.json}"],
         "ok": {2}, "keep": [], "files": {"a.json": _device_doc(None), "b.json": _device_doc("nodeB")}},
        {"tool": "labels", "kind": "classes as a string", "argv": ["{w}/ds"], "ok": {2}, "keep": [],
         "files": {"ds/manifest.json": json.dumps({"schema": 1, "samples": 0, "classes": "cat,dog", "files": []})}},
        {"tool": "labels", "kind": "non-ascii digits", "argv": ["{w}/ds"], "ok": {2}, "keep": [],
         "files": {"ds/manifest.json": json.dumps({"schema": 1, "samples": 1, "classes": ["cat"], "files": []}),
                   "ds/labels.csv": "sample,label\n\u0660,cat\n"}},
        {"tool": "tuning", "kind": "FIFO in --root", "argv": ["--root", "{root}"], "ok": {2}, "keep": []},
        {"tool": "health", "kind": "FIFO in --sysfs", "argv": ["check", "--sysfs", "{sysfs}"], "ok": {2}, "keep": []},
        {"tool": "elastic", "kind": "crafted pickle checkpoint", "argv": ["--dir", "{ckdir}", "--steps", "1"],
         "ok": {2}, "keep": [], "marker": "PWNED"},
    ]
    for prog, tool, argv in (("nvidia-smi", "smiparse", []), ("promtool", "prom", ["check"]),
                             ("ncu", "ncu", ["traffic", "--ncu", "{bin}/ncu", "--workloads", "softmax_bf16"])):
        for what, body in (("sleeping", "sleep 600 &\nsleep 600\n"),
                           ("flooding", "yes 'GPU 0: x' | head -n 2000000\n"),
                           ("garbage", "echo 'Segmentation fault?? %%%'\n")):
            if (tool, what) == ("smiparse", "garbage") or (tool == "prom" and what != "sleeping"):
                continue            # smiparse records garbage as "reader refused it"; promtool output is shown as is
            out.append({"tool": tool, "kind": f"{what} fake {prog}", "argv": argv, "ok": {1}, "keep": [],
                        "fake": (prog, "#!/bin/sh\n" + body)})
    return out


def _device_doc(host: str | None) -> str:
    """A minimal ``python -m helpers device --out`` document of ``host`` (None: a plain ``--json`` report)."""
    rec = {"os": "Linux", "python": "3.11", "gpus": [], "cpu": {"model": "x", "cores_logical": 2, "cores_physical": 2,
                                                                "numa_nodes": 1, "ram_bytes": 2**34}}
    return json.dumps(rec if host is None else {"provenance": {"host": host}, "records": [rec]})


def prepare(case: dict, w: Path) -> tuple[list[str], dict]:
    """Make the case's files in ``w``; return (argv, extra env)."""
    tool, env = case["tool"], {"BOOK_PROGRAM_TIMEOUT_S": "5"}
    names = {"{fifo}": w / "fifo", "{dir}": w / "adir", "{sock}": w / "sock", "{in}": w / "in.txt",
             "{rows}": w / "rows.txt", "{link}": w / "link.json", "{ckdir}": w / "ck", "{bin}": w / "bin",
             "{root}": w / "root", "{sysfs}": w / "sysfs"}
    joined = " ".join(case["argv"] + case["keep"])
    names["{w}"] = w
    for rel, text in case.get("files", {}).items():         # files of their own, in sub-folders if named so
        (w / rel).parent.mkdir(parents=True, exist_ok=True)
        (w / rel).write_text(text)
        names["{f:" + rel + "}"] = w / rel
    if "{fifo}" in joined:
        os.mkfifo(names["{fifo}"])
    if "{dir}" in joined:
        names["{dir}"].mkdir()
    if "{sock}" in joined:
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(names["{sock}"]))
        s.close()                                  # the socket file stays, as a socket
    if tool in READERS:
        names["{in}"].write_text(_valid(tool))
        if "{rows}" in joined:
            names["{rows}"].write_text(READERS[tool][2])
        if "{link}" in joined:
            os.link(names["{in}"], names["{link}"])
    for key, text in {**(READERS[tool][3] if tool in READERS else {}), **case.get("bad", {})}.items():
        p = w / f"bad-{key.replace(' ', '_')}.txt"
        p.write_text(text)
        names["{bad:" + key + "}"] = p
    if "{ckdir}" in joined:
        names["{ckdir}"].mkdir()
        with open(names["{ckdir}"] / "ckpt.pt", "wb") as f:
            pickle.dump({"model": _Evil(str(w / case["marker"]))}, f)
        env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), RANK="0", WORLD_SIZE="1",
                   LOCAL_RANK="0")
    if "{root}" in joined:
        (names["{root}"] / "proc").mkdir(parents=True)
        os.mkfifo(names["{root}"] / "proc" / "interrupts")
    if "{sysfs}" in joined:
        d = names["{sysfs}"] / "mlx5_0" / "ports" / "1"
        d.mkdir(parents=True)
        os.mkfifo(d / "state")
    if "fake" in case:
        prog, body = case["fake"]
        names["{bin}"].mkdir()
        (names["{bin}"] / prog).write_text(body)
        (names["{bin}"] / prog).chmod(0o755)
        env["PATH"] = f"{names['{bin}']}:{os.environ.get('PATH', '')}"
    argv = []
    for a in case["argv"]:
        for k, v in names.items():
            a = a.replace(k, str(v))
        argv.append(a)
    case["_keep"] = [str(names[k]) for k in case["keep"]]
    return argv, env


class _Evil:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def snapshot(paths: list[str]) -> dict:
    """What must stay untouched: each path's kind and, for a regular file, its bytes."""
    out = {}
    for p in paths:
        st = os.lstat(p)
        out[p] = (st.st_mode >> 12, Path(p).read_bytes() if os.path.isfile(p) and not os.path.islink(p) else None)
    return out


def touched(before: dict, w: Path, case: dict) -> list[str]:
    bad = []
    for p, (kind, data) in before.items():
        if not os.path.lexists(p):
            bad.append(f"{p} removed")
            continue
        st = os.lstat(p)
        if st.st_mode >> 12 != kind or (data is not None and Path(p).read_bytes() != data):
            bad.append(f"{Path(p).name} changed")
    if case.get("marker") and (w / case["marker"]).exists():
        bad.append("the crafted checkpoint ran code")
    return bad
