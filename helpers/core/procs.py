"""Process hygiene for the book's ranks and servers: nothing outlives its run (chapters 03, 06-08, 12-14).

* every rank leads its own process group, so :func:`stop_all` stops the rank *and* what it started
  (SIGCONT first: a stopped process cannot act on SIGTERM; then SIGTERM; then SIGKILL for the whole group);
* SIGTERM / SIGHUP in the parent raise :class:`Stopped`, so its ``finally`` blocks stop the ranks and remove work
  files, exactly as Ctrl-C (KeyboardInterrupt) does;
* a heartbeat per rank tells a rank that is stopped or frozen (no beat) from ranks that wait for it (beating),
  so a timeout names the culprit instead of every rank; the same thread ends the rank (and what it started) when
  its parent is gone, even after a SIGKILL the parent could not act on;
* :func:`check_local_ranks` refuses more local ranks than this machine runs in time (:data:`RANKS_PER_CORE`).
"""
from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence


# Local ranks on CPU: each imports torch and runs its own threads; beyond 4 per core (at least 8: the GPUs of one host)
# a CPU run only thrashes and misses its timeout (helpers.core.cli.MAX_WORLD_SIZE is this limit).
RANKS_PER_CORE = 4
MIN_RANK_LIMIT = 8


def local_rank_limit() -> tuple[int, str]:
    """(the most ranks this machine spawns, why)."""
    cores = os.cpu_count() or 1
    n = max(RANKS_PER_CORE * cores, MIN_RANK_LIMIT)
    return n, f"{RANKS_PER_CORE} ranks per CPU core, at least {MIN_RANK_LIMIT}; this machine has {cores} core(s)"


def check_local_ranks(world_size: int, fix: str = "") -> None:
    """ValueError (exit 2 under ``cli.run``) when ``world_size`` local ranks are more than this machine runs in time."""
    n, why = local_rank_limit()
    if world_size > n:
        raise ValueError(f"{world_size} local ranks: this machine runs at most {n} ({why}); "
                         + (fix or f"use at most {n} ranks, or start them across machines with torchrun/srun"))


def heartbeat(beats, rank: int, parent: int | None = None, folder: str | None = None) -> None:
    """A daemon thread: the rank's wall-clock time every 0.5 s. A rank that is stopped (SIGSTOP) or frozen stops
    beating, while ranks merely waiting in a collective keep beating — which is how a timeout names the culprit.
    With ``parent`` (the launcher's pid): once the rank's parent is no longer it (the launcher died, even by
    SIGKILL), the rank removes the run's ``folder`` and kills its own process group — itself and whatever it
    started: no rank outlives its run, and no work folder stays behind for a parent that can no longer remove it."""
    import threading

    def beat():
        while True:
            beats[rank] = time.time()
            if parent is not None and os.getppid() != parent:      # the launcher is gone: so is this rank
                if folder:
                    import shutil
                    shutil.rmtree(folder, ignore_errors=True)
                lead = os.getpgrp() == os.getpid()                   # never the launcher's own group
                os.killpg(os.getpgrp(), signal.SIGKILL) if lead else os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(0.5)

    threading.Thread(target=beat, name=f"heartbeat-{rank}", daemon=True).start()


def signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)                      # the rank and whatever it started (it leads its own group)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def stop_all(procs: Sequence) -> None:
    procs = [p for p in procs if p.pid is not None]  # a start() that failed leaves nothing to stop
    for p in procs:
        signal_group(p.pid, signal.SIGCONT)     # a stopped rank cannot act on SIGTERM until it runs again
        signal_group(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 3
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:                              # the ranks' children too, even where the rank itself is gone
        signal_group(p.pid, signal.SIGKILL)
        p.join(1)


def stop_process(p, timeout_s: float = 10.0) -> None:
    """Stop one ``subprocess.Popen`` (a server the book started): SIGTERM, wait, then SIGKILL. Safe to call twice."""
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(timeout=timeout_s)


class Stopped(SystemExit):
    """Raised in the parent by SIGTERM / SIGHUP while ranks run, so ``finally`` stops them and cleans up."""


last_signal: int | None = None     # the signal raise_stop last turned into Stopped (cli.run resets it per run)


def raise_stop(signum, _frame):
    global last_signal
    last_signal = signum    # a C extension (torch.save's writer) may turn Stopped into its own error: cli.run looks here
    raise Stopped(128 + signum)


def timeout_message(world_size: int, timeout_s: float, got, beats, stage) -> tuple[list[int], str]:
    """Which ranks to blame when the run timed out, from heartbeats and progress stages."""
    now = time.time()
    pending = [r for r in range(world_size) if r not in got]
    silent = [r for r in pending if beats[r] and now - beats[r] > 5.0]
    if silent:
        quiet = max(now - beats[r] for r in silent)
        return silent, (f"timeout after {timeout_s:.0f} s: rank(s) {silent} of {world_size} stopped responding "
                        f"(no heartbeat for {quiet:.0f} s: stopped, frozen or swapped out); the other ranks waited "
                        "for them")
    never = [r for r in pending if stage[r] == 0]
    if never:
        return never, (f"timeout after {timeout_s:.0f} s: rank(s) {never} of {world_size} never joined the process "
                       "group (rendezvous on MASTER_ADDR/MASTER_PORT did not complete)")
    return pending, (f"timeout after {timeout_s:.0f} s: rank(s) {pending} of {world_size} did not finish (hung, "
                     "e.g. waiting in a collective that another rank never called)")
