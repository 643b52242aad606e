"""Try every tool the way a hostile new user would, and tally what happened (issue 18's acceptance table).

    python scripts/hostile_inputs.py [--jobs 2] [--tools device,iobench] [--json FILE]

Cases come from the tools' own parsers (every typed or choice flag gets the bad values its type refuses: zero,
negative, huge, non-finite, malformed, empty) plus hand-written ones (missing, empty and folder paths for file
arguments; unknown sub-commands). Each case runs as ``python -m helpers TOOL …`` in a fresh working folder with
its own TMPDIR, and is classified: clear error (non-zero exit, one or two stderr lines, no traceback), traceback,
wrong success (exit 0), hang (past the time limit; killed with its process group), leftovers (files left in the
working folder or TMPDIR). ``--kinds files`` adds the hostile files, outputs and helper programs of
``scripts/hostile_files.py`` (FIFOs, /dev/zero, 1e6 rows, folders, --out at an input/FIFO/socket, NaN/inf/negative
and non-ASCII numbers, sleeping/flooding/garbage fake programs, a crafted pickle), each also judged on
"data touched" (an input or FIFO changed, the pickle's marker created).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.book.test_cli_properties import flags, rejected  # noqa: E402  (the parsers, read the same way)

from helpers.__main__ import TOOLS  # noqa: E402
from scripts import hostile_files  # noqa: E402

BAD = ["0", "-1", "-0.5", "abc", "nan", "inf", "1e400", "", "99999999999999999999", "1,,2", "4Q"]
EXTRA = {
    "ibdiag": [["--ibstat", "/no/such/file"], ["--ibstat", ""], ["--ibstat", "/"], ["--inventory="]],
    "nccltests": [["/no/such/log"], [""], ["/"]],
    "overview": [["fleet", "/no/such.json"], ["fleet", "/"]],
    "ncclenv": [["--lint", "/no/such/script.sh"], ["--lint="]],
    "health": [["check", "--sysfs=/no/such"], ["check", "--sysfs="]],
    "nodecheck": [[""], ["/"], ["/no/such"]],
    "pipeline": [["nosuch"]],
    "bench": [["nosuch"]],
    "iperf": [["--bitrate", "fast"], ["--bitrate=-5M"], ["--bitrate", "0"], ["--bitrate", "1e308"],
              ["--bitrate", "10G/0"]],
    "memory": [["--params", "1e-300"], ["--params", "0.5"], ["--params", "1e300"], ["--dp", "\u0661\u0662"]],
}


def cases(tools):
    out = []
    for tool in tools:
        for prefix, opt, act in flags(tool):
            out += [(tool, [*prefix, f"{opt}={v}"]) for v in BAD if rejected(act, v)]
        out += [(tool, argv) for argv in EXTRA.get(tool, [])]
    return out


def _spawn(args, cwd, env, timeout_s: float, preexec=None):
    """``python -m helpers ARGS`` in its own session; killed with its children after ``timeout_s``."""
    p = subprocess.Popen([sys.executable, "-m", "helpers", *args], cwd=cwd, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec)
    try:
        out, err = p.communicate(timeout=timeout_s)
        return p, out, err, False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return p, out, err, True


def run(case, timeout_s: float):
    tool, argv = case
    with tempfile.TemporaryDirectory(prefix="hostile-") as base:
        cwd, tmp = Path(base, "cwd"), Path(base, "tmp")
        cwd.mkdir(), tmp.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp), "BOOK_QUIET": "1", "PYTHONPATH": str(ROOT)}
        p, out, err, hung = _spawn([tool, *argv], cwd, env, timeout_s)
        left = [str(x.relative_to(base)) for d in (cwd, tmp) for x in d.iterdir()]
    lines = [x for x in err.strip().splitlines() if x.strip()]
    if hung:
        kind = "hang"
    elif "Traceback" in err:
        kind = "traceback"
    elif p.returncode == 0:
        kind = "wrong success"
    elif len(lines) <= 2:
        kind = "clear error"
    else:
        kind = "unclear error"
    return {"tool": tool, "argv": argv, "exit": p.returncode, "kind": kind, "leftovers": left,
            "stderr": "\n".join(lines[-3:])}


def run_file_case(case, timeout_s: float):
    """One case of hostile_files: its files made in a fresh folder, judged on exit code, hang, data touched."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as base:
        cwd, tmp = Path(base, "cwd"), Path(base, "tmp")
        cwd.mkdir(), tmp.mkdir()
        argv, extra = hostile_files.prepare(case, cwd)
        made = set(cwd.iterdir())
        before = hostile_files.snapshot(case["_keep"])
        env = {**os.environ, "TMPDIR": str(tmp), "BOOK_QUIET": "1", "PYTHONPATH": str(ROOT), **extra}
        cap = hostile_files.MEM_CAP_BYTES
        p, out, err, hung = _spawn([case["tool"], *argv], cwd, env, timeout_s,
                                   lambda: resource.setrlimit(resource.RLIMIT_AS, (cap, cap)))
        data = hostile_files.touched(before, cwd, case)
        left = [str(x.relative_to(base)) for x in [*(set(cwd.iterdir()) - made), *tmp.iterdir()]
                if x.name != case.get("marker")]
    lines = [x for x in err.strip().splitlines() if x.strip()]
    if hung or "MemoryError" in err:
        kind = "hang"
    elif data:
        kind = "data touched"
    elif "Traceback" in err:
        kind = "traceback"
    elif p.returncode not in case["ok"] or (             # exit 0 is wrong unless the case expects an answer
            case.get("stdout_has") and case["stdout_has"] not in out):
        kind = "wrong success"
    elif len(lines) <= 2 or case.get("stdout_has"):
        kind = "clear error"
    else:
        kind = "unclear error"
    return {"tool": case["tool"], "argv": [case["kind"], *case["argv"]], "exit": p.returncode, "kind": kind,
            "leftovers": left, "stderr": "\n".join(lines[-3:] + data)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tools", default="", help="comma-separated subset (default: every tool)")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--kinds", choices=["args", "files", "all"], default="all",
                    help="bad flag values (args), hostile files/outputs/programs (files), or both")
    a = ap.parse_args()
    tools = [t for t in (a.tools.split(",") if a.tools else TOOLS) if t]
    todo = [(run, c) for c in cases(tools)] if a.kinds in ("args", "all") else []
    if a.kinds in ("files", "all"):
        todo += [(run_file_case, c) for c in hostile_files.cases() if c["tool"] in tools]
    with ThreadPoolExecutor(a.jobs) as ex:
        res = list(ex.map(lambda fc: fc[0](fc[1], a.timeout), todo))
    kinds = ["clear error", "unclear error", "traceback", "wrong success", "hang", "data touched"]
    print(f"{'inputs tried':14s} {len(res)}")
    for k in kinds:
        print(f"{k:14s} {sum(r['kind'] == k for r in res)}")
    print(f"{'leftovers':14s} {sum(bool(r['leftovers']) for r in res)}")
    by_kind: dict = {}
    for r, (fn, c) in zip(res, todo):
        if fn is run_file_case:
            by_kind.setdefault(c["kind"].split(":")[0], []).append(r)
    if by_kind:
        print(f"\n{'file kind':32s} tried " + " ".join(f"{k.split()[0]:>7s}" for k in kinds) + " leftover")
        for k, rs in sorted(by_kind.items()):
            print(f"{k:32s} {len(rs):5d} " + " ".join(f"{sum(r['kind'] == x for r in rs):7d}" for x in kinds)
                  + f" {sum(bool(r['leftovers']) for r in rs):8d}")
    for r in res:
        if r["kind"] != "clear error" or r["leftovers"]:
            print(f"  {r['kind']:13s} python -m helpers {r['tool']} {' '.join(r['argv'])} -> exit {r['exit']}: "
                  f"{r['stderr'][:200]!r} {r['leftovers'] or ''}")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0 if all(r["kind"] == "clear error" and not r["leftovers"] for r in res) else 1


if __name__ == "__main__":
    sys.exit(main())
