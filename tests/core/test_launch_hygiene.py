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


def test_children_of_ranks_die_with_them(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pidfile = tmp_path / "child"
    with pytest.raises(launch.RankFailed):
        launch.spawn(w.start_child_and_hang, 2, str(pidfile), timeout_s=25)
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
