"""Record the reference results on a GPU machine: run every scripts/record/*.sh with $PY and $DEST set.

    make record-h200 PY=python3            # on the H200; writes assets/measurements/h200/*.json
    python scripts/record.py --dest DIR [--only foundation,bench]

Each script calls helpers CLIs with --out, so every file carries its own provenance. A failing script is
reported by name and the others still run; the exit code says whether all succeeded.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dest", default="assets/measurements/h200")
    ap.add_argument("--only", default="", help="comma-separated script names (without .sh)")
    a = ap.parse_args()
    dest = (ROOT / a.dest).resolve()
    dest.mkdir(parents=True, exist_ok=True)
    only = {s for s in a.only.split(",") if s}
    # DEST relative to the repo root when it lies inside it, so recorded commands read as a reader would type them
    shown = os.path.relpath(dest, ROOT) if dest.is_relative_to(ROOT) else str(dest)
    env = {**os.environ, "PY": sys.executable, "DEST": shown, "NCCL_NVLS_ENABLE": "0", "BOOK_QUIET": "1"}
    failed = []
    for script in sorted((ROOT / "scripts" / "record").glob("*.sh")):
        if only and script.stem not in only:
            continue
        t0 = time.perf_counter()
        p = subprocess.run(["bash", str(script)], cwd=ROOT, env=env)
        status = "ok" if p.returncode == 0 else f"FAILED (exit {p.returncode})"
        print(f"record {script.stem}: {status} in {time.perf_counter() - t0:.1f} s", flush=True)
        if p.returncode:
            failed.append(script.stem)
    print(f"recorded into {dest}: {sorted(x.name for x in dest.glob('*.json'))}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
