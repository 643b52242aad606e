"""Run `make test`'s stages in order, time each, and print the times at the end (also when a stage fails).

    python scripts/stages.py NAME=COMMAND [+NAME=COMMAND] [NAME=COMMAND ...]

Each COMMAND runs through the shell; the first that fails stops the run (exit 1) after the table is printed, so a
contributor sees where the minutes went either way (issue 35: `make test` ≤ 15 minutes on 2 cores). A stage written
``+NAME=COMMAND`` runs alongside the stage before it (its output goes to ``_build/stage-NAME.log`` and is printed
when both are done): the unit tests spend part of their time waiting on timeouts and child processes, and the book
build fills those gaps.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

LOGS = Path("_build")


def parse(argv: list[str]) -> list[list[tuple[str, str]]]:
    """Groups of (name, command) that run together; ValueError naming a malformed stage."""
    groups: list[list[tuple[str, str]]] = []
    for a in argv:
        name, sep, cmd = a.partition("=")
        along = name.startswith("+")
        name = name.lstrip("+")
        if not sep or not name or not cmd or (along and not groups):
            raise ValueError(f"{a!r} is not NAME=COMMAND (or +NAME=COMMAND after another stage)")
        if along:
            groups[-1].append((name, cmd))
        else:
            groups.append([(name, cmd)])
    return groups


def run_group(group: list[tuple[str, str]]) -> list[tuple[str, float, int]]:
    (name, cmd), rest = group[0], group[1:]
    started = []
    for n, c in rest:                        # alongside: output to a log, shown when done
        LOGS.mkdir(exist_ok=True)
        log = LOGS / f"stage-{n}.log"
        print(f"==> {n} (alongside {name}, output in {log}): {c}", flush=True)
        f = log.open("w")
        started.append((n, subprocess.Popen(c, shell=True, executable="/bin/bash", stdout=f,
                                            stderr=subprocess.STDOUT), time.monotonic(), log, f))
    print(f"==> {name}: {cmd}", flush=True)
    t0 = time.monotonic()
    done = [(name, 0.0, subprocess.call(cmd, shell=True, executable="/bin/bash"))]
    done[0] = (name, time.monotonic() - t0, done[0][2])
    for n, p, t1, log, f in started:
        rc = p.wait()
        f.close()
        done.append((n, time.monotonic() - t1, rc))
        print(f"==> {n} (ran alongside {name}) said:\n{log.read_text()[-6000:]}", flush=True)
    return done


def main(argv: list[str]) -> int:
    try:
        groups = parse(argv)
    except ValueError as e:
        print(f"stages: {e}", file=sys.stderr)
        return 2
    done: list[tuple[str, float, int]] = []
    t_all = time.monotonic()
    ran = 0
    for group in groups:
        done += run_group(group)
        ran += 1
        if any(rc for _, _, rc in done):
            break
    total = time.monotonic() - t_all
    print("\nmake test stages (wall-clock s; + ran alongside the stage above):")
    alongside = {n for g in groups for n, _ in g[1:]}
    for name, dt, rc in done:
        label = ("+" if name in alongside else "") + name
        print(f"  {label:<14} {dt:7.0f}  {'ok' if rc == 0 else f'FAILED (exit {rc})'}")
    skipped = [n for g in groups[ran:] for n, _ in g]
    if skipped:
        print(f"  not run: {', '.join(skipped)}")
    print(f"  {'total':<14} {total:7.0f}  ({total / 60:.1f} min)")
    return 1 if any(rc for _, _, rc in done) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
