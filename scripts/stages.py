"""Run `make test`'s stages in order, time each, and print the times at the end (also when a stage fails).

    python scripts/stages.py NAME=COMMAND [NAME=COMMAND ...]

Each COMMAND runs through the shell; the first that fails stops the run (exit 1) after the table is printed, so a
contributor sees where the minutes went either way (issue 35: `make test` ≤ 15 minutes on 2 cores).
"""
from __future__ import annotations

import subprocess
import sys
import time


def main(argv: list[str]) -> int:
    stages = []
    for a in argv:
        name, sep, cmd = a.partition("=")
        if not sep or not name or not cmd:
            print(f"stages: {a!r} is not NAME=COMMAND", file=sys.stderr)
            return 2
        stages.append((name, cmd))
    done: list[tuple[str, float, str]] = []
    t_all = time.monotonic()
    rc = 0
    for name, cmd in stages:
        print(f"==> {name}: {cmd}", flush=True)
        t0 = time.monotonic()
        rc = subprocess.call(cmd, shell=True, executable="/bin/bash")
        done.append((name, time.monotonic() - t0, "ok" if rc == 0 else f"FAILED (exit {rc})"))
        if rc:
            break
    total = time.monotonic() - t_all
    print("\nmake test stages (wall-clock s):")
    for name, dt, status in done:
        print(f"  {name:<14} {dt:7.0f}  {status}")
    skipped = [n for n, _ in stages[len(done):]]
    if skipped:
        print(f"  not run: {', '.join(skipped)}")
    print(f"  {'total':<14} {total:7.0f}  ({total / 60:.1f} min)")
    return 1 if rc else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
