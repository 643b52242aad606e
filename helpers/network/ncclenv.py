"""The NCCL environment variables that matter, as a data table, and a linter for a job's environment (chapter 03).

The table (``data/nccl_env.yaml``, sourced from the NCCL User Guide's "Environment Variables" page) says what
each variable changes and when to touch it. :func:`lint` reads an environment (a job script's ``export`` lines,
or ``os.environ``) and reports values NCCL would not accept and settings that quietly cost bandwidth.

    python -m helpers ncclenv                 # the table
    python -m helpers ncclenv --lint          # lint this shell's NCCL_* variables
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "nccl_env.yaml"
SOURCE = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
_TRAPS = {  # variable, value -> why it hurts when left set in a production job
    ("NCCL_IB_DISABLE", "1"): "InfiniBand/RoCE is off: inter-node traffic falls back to TCP sockets",
    ("NCCL_P2P_DISABLE", "1"): "NVLink/PCIe peer-to-peer is off: intra-node traffic goes through host memory",
    ("NCCL_SHM_DISABLE", "1"): "shared-memory transport is off: same-host ranks without P2P use the network",
    ("NCCL_DEBUG", "TRACE"): "TRACE logging slows every call (and needs a debug build of NCCL)",
}


def rows() -> list[dict]:
    import yaml

    return yaml.safe_load(DATA.read_text())


def table():
    """The variables as a pandas table (variable, values, default, what it changes, when to touch it)."""
    import pandas as pd

    return pd.DataFrame([{"variable": r["var"], "values": ", ".join(map(str, r["values"])),
                          "default": str(r["default"]), "what it changes": r["changes"],
                          "when to touch it": r["when"]} for r in rows()])


def _known():
    out = {}
    for r in rows():
        for name in r["var"].split(" / "):
            out[name] = r["values"]
    return out


def parse_exports(script: str) -> dict[str, str]:
    """NCCL_* assignments from shell text, last one wins: ``export NCCL_X=…``, ``declare -x``, ``env NCCL_X=… cmd``,
    several on one line (``export NCCL_A=1 NCCL_B=2``, ``NCCL_A=1; NCCL_B=2``), quoted values; comments dropped."""
    import shlex

    env = {}
    for line in script.splitlines():
        lex = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lex.whitespace_split, lex.commenters = True, "#"
        try:
            words = list(lex)
        except ValueError:                       # an unbalanced quote: fall back to plain words
            words = line.split("#", 1)[0].split()
        for w in words:
            m = re.fullmatch(r"(NCCL_\w+)=(.*)", w, re.S | re.A)
            if m:
                env[m.group(1)] = m.group(2).strip("'\"")
    return env


def lint(env: dict[str, str] | None = None) -> list[str]:
    """Problems with the NCCL_* variables of ``env`` (default: this process's environment), one sentence each."""
    env = {k: v for k, v in (os.environ if env is None else env).items() if k.startswith("NCCL_")}
    known, out = _known(), []
    for k, v in sorted(env.items()):
        if k not in known:
            out.append(f"{k}={v}: not in the book's table — check the spelling against {SOURCE}")
            continue
        allowed = [str(a) for a in known[k]]
        if k in ("NCCL_ALGO", "NCCL_PROTO"):
            body = v.split(":")[-1].lstrip("^")
            tokens = [t for t in re.split(r"[,;]", body) if t]
            bad = [t for t in tokens if t.lower() not in {a.lower() for a in allowed}]
            if bad:
                out.append(f"{k}={v}: unknown {'algorithm' if k == 'NCCL_ALGO' else 'protocol'}(s) {bad}; "
                           f"valid: {', '.join(allowed)}")
            else:
                out.append(f"{k}={v}: restricts NCCL's choice — fine for a benchmark, usually slower in production")
        elif set(allowed) <= {"0", "1", "2"} and v not in allowed:
            out.append(f"{k}={v}: expected one of {allowed}")
        elif k in ("NCCL_DEBUG",) and v.upper() not in allowed:
            out.append(f"{k}={v}: expected one of {allowed}")
        if (k, v.upper() if k == "NCCL_DEBUG" else v) in _TRAPS:
            out.append(f"{k}={v}: {_TRAPS[(k, v.upper() if k == 'NCCL_DEBUG' else v)]}")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers ncclenv", description=__doc__.split("\n")[0])
    from helpers.core import cli

    ap.add_argument("--lint", nargs="?", const="-", metavar="SCRIPT", type=cli.nonempty_path,
                    help="lint a job script's exports (or, without a file, this shell's environment)")
    a = ap.parse_args(argv)
    if a.lint:
        from helpers.core import inputs

        env = None if a.lint == "-" else parse_exports(inputs.read_text(a.lint, what="job script",
                                                                        max_bytes=16 * 2**20))
        problems = lint(env)
        print("\n".join(problems) if problems else "no NCCL_* problems found")
        return 1 if problems else 0
    import pandas as pd

    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        print(table()[["variable", "default", "what it changes"]].to_string(index=False))
    print(f"source: {SOURCE}")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
