"""Nothing outlives a run: stopped ranks are named, ranks' children die with them, SIGTERM cleans up (issue 18)."""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers.core import launch
from tests import rank_workers as w


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:                                         # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_a_stopped_rank_is_named_not_all_of_them(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))     # the failed run's logs stay (named), in our tmp
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.stop_self_on_rank, 3, 2, timeout_s=20)
    assert e.value.ranks == (2,), str(e.value)
    assert "stopped responding" in str(e.value)


def test_children_of_ranks_die_with_them_and_the_hung_rank_is_named(tmp_path, monkeypatch):
    """Rank 1 hangs, rank 0 returns; both started a child. The timeout names rank 1 and no child outlives the run.
    (One timed-out run for both checks: each costs the timeout's full wait.)"""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pidfile = tmp_path / "child"
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.start_child_and_hang, 2, str(pidfile), 1, timeout_s=25)
    # on a loaded machine rank 0 may still be starting too; rank 1 is always among the hung
    assert 1 in e.value.ranks and "timeout" in str(e.value)
    pids = [int(Path(f).read_text()) for f in glob.glob(f"{pidfile}.*")]
    assert len(pids) == 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids), "a rank's child outlived the run"


def test_log_folder_removed_after_success(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))     # our own temp dir: other runs cannot interfere
    launch.spawn(w.env_of, 2, timeout_s=60)
    assert glob.glob(str(tmp_path / "book-ranks-*")) == []


def test_sigterm_to_the_cli_stops_every_rank():
    """`python -m helpers launch` is killed with SIGTERM while its ranks hang: no rank survives."""
    code = ("import sys, time; from helpers.core import launch; from tests import rank_workers as w; "
            "launch.spawn(w.hang_on_rank, 2, 0, timeout_s=300)")
    root = Path(__file__).resolve().parents[2]
    p = subprocess.Popen([sys.executable, "-c", code], cwd=root, start_new_session=True)
    try:
        ranks, deadline = [], time.monotonic() + 90  # wait for both ranks (slow to import torch under load)
        while len(ranks) < 2 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.5)
            kids = subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True, text=True).stdout.split()
            ranks = [int(k) for k in kids]
        time.sleep(2)                            # rank 0 is in its sleep
        p.send_signal(signal.SIGTERM)
        p.wait(20)
        deadline = time.monotonic() + 5
        while any(_alive(r) for r in ranks) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ranks and not any(_alive(r) for r in ranks)
        assert p.returncode == 128 + signal.SIGTERM
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)


def test_a_rank_that_dies_before_joining_stops_the_others_and_is_named(tmp_path, monkeypatch, capfd):
    """One rank fails while it loads its worker (before init_process_group): the other, waiting at the rendezvous,
    is stopped at once (not after the 60 s timeout); the error names the rank and its error line, and the rank's
    traceback stays in its log, out of the user's stderr (issue 35)."""
    from tests import rank_crash_once

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("BOOK_TEST_CRASH_ONCE", str(tmp_path / "crashed"))
    t0 = time.monotonic()
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(rank_crash_once.rank_of, 2, timeout_s=60)
    assert time.monotonic() - t0 < 30
    msg = str(e.value)
    assert e.value.rank in (0, 1) and msg.startswith(f"rank {e.value.rank} of 2 failed before it joined")
    assert "ImportError: planted import failure in one rank" in msg and "\n" not in msg
    assert "Traceback" not in capfd.readouterr().err
    assert "Traceback" in Path(e.value.log).read_text()


def test_too_many_local_ranks_are_refused_with_the_limit(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    with pytest.raises(ValueError, match=r"9 local ranks: this machine runs at most 8 \(4 ranks per CPU core"):
        launch.spawn(w.env_of, 9)


def test_cpp_log_lines_stay_out_of_errors_unless_debug(monkeypatch):
    from helpers.core import rankerrors

    log = ("Traceback (most recent call last):\n  File x\nValueError: boom\n"
           "[W1208 00:50:42.156 ProcessGroupGloo.cpp:12] Warning: Unable to resolve hostname\n[c10d] bye\n")
    assert rankerrors.last_error(log) == "ValueError: boom" and "c10d" not in rankerrors.quiet(log)
    monkeypatch.setenv("BOOK_DEBUG", "1")
    assert rankerrors.quiet(log) == log


def test_ranks_die_with_a_killed_launcher(tmp_path):
    """SIGKILL to the launcher (no cleanup can run there): its ranks notice their parent is gone and end themselves
    and their children within seconds — no orphan outlives the run."""
    code = ("import sys; from helpers.core import launch; from tests import rank_workers as w; "
            f"launch.spawn(w.start_child_and_hang, 2, {str(tmp_path / 'child')!r}, timeout_s=300)")
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "tmp").mkdir()
    p = subprocess.Popen([sys.executable, "-c", code], cwd=root, start_new_session=True,
                         env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    try:
        deadline = time.monotonic() + 90
        while len(glob.glob(str(tmp_path / "child.*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.3)
        time.sleep(0.3)
        ranks = [int(k) for k in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                                                text=True).stdout.split()]
        kids = [int(Path(f).read_text()) for f in glob.glob(str(tmp_path / "child.*"))]
        assert len(kids) == 2, "the ranks never started"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(x) for x in ranks + kids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(x) for x in ranks + kids), "a rank or its child outlived the killed launcher"
        assert os.listdir(tmp_path / "tmp") == []                # the ranks removed the run's folder
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        for f in glob.glob(str(tmp_path / "child.*")):          # never leave a sleeper behind, even on failure
            try:
                os.kill(int(Path(f).read_text()), signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
