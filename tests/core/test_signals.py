"""Cleanup on every signal, exit 128+signal, and failed ranks in one line (issue 28 item 6).

A tool is started in a subprocess with a TMPDIR of its own; once its ranks have written into their TMPDIR and inductor
cache, SIGTERM, SIGINT or SIGHUP is sent: the exit code is 128+signal and the TMPDIR is left empty (no ``book-ranks-*``,
no ``book-run-*``, no ``torchinductor_*``). The three runs go in parallel to stay within a few seconds."""
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers.core import cli, launch, rankenv, rankerrors
from tests import rank_workers as w

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_tmp(tmp_path, monkeypatch):
    """A failed run keeps its named rank logs: in this test's folder, never in the machine's /tmp."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))

# a distributed tool in miniature: the shared options (and so the per-run folder), then ranks that hang
TOOL = ("import sys; from helpers.core import cli, launch; from tests import rank_workers as w\n"
        "def main(argv):\n"
        "    import argparse; ap = argparse.ArgumentParser(); launch.add_args(ap, 2); a = ap.parse_args(argv)\n"
        "    launch.run(w.fill_tmp_and_hang, a.world_size, timeout_s=300)\n"
        "sys.exit(cli.run(main, sys.argv[1:]))\n")


def _start(tmp: Path, ranks: int) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHINDUCTOR_CACHE_DIR", "RANK", "WORLD_SIZE")}
    return subprocess.Popen([sys.executable, "-c", TOOL, "--world-size", str(ranks)], cwd=ROOT,
                            env={**env, "TMPDIR": str(tmp)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _ranks_ready(tmp: Path, ranks: int) -> bool:
    logs = glob.glob(str(tmp / "book-ranks-*" / "rank*.log"))
    return len(logs) == ranks and all("ready" in Path(f).read_text() for f in logs)


def test_every_signal_cleans_up_and_exits_128_plus_signal(tmp_path):
    ranks = {signal.SIGTERM: 2, signal.SIGINT: 1, signal.SIGHUP: 1}      # 5 ranks in all: light on 2 cores
    sigs = tuple(ranks)
    runs = {}
    for sig in sigs:
        (tmp_path / sig.name).mkdir()
        runs[sig] = _start(tmp_path / sig.name, ranks[sig])
    try:
        deadline = time.monotonic() + 60
        pending = set(sigs)
        while pending and time.monotonic() < deadline:
            for sig in list(pending):
                if _ranks_ready(tmp_path / sig.name, ranks[sig]):
                    # the ranks wrote their TMPDIR files and inductor cache inside the run's folders
                    assert glob.glob(str(tmp_path / sig.name / "book-r*" / "**" / "kernel*.py"), recursive=True)
                    runs[sig].send_signal(sig)
                    pending.discard(sig)
            time.sleep(0.1)
        assert not pending, "ranks never started"
        for sig, p in runs.items():
            _out, err = p.communicate(timeout=30)
            assert p.returncode == 128 + sig, (sig.name, err[-800:])
            assert "Traceback" not in err
            assert sorted(os.listdir(tmp_path / sig.name)) == [], (sig.name, os.listdir(tmp_path / sig.name))
    finally:
        for p in runs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)


def test_a_killed_rank_is_named_in_one_line():
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.kill_self_on_rank, 2, 1, timeout_s=60)
    msg = str(e.value)
    assert e.value.rank == 1 and "\n" not in msg
    assert msg.startswith("rank 1 of 2 died (SIGKILL); the others stopped") and "rank1.log" in msg


def test_bogus_socket_interface_names_the_ones_present(monkeypatch):
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "bogus0")
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.env_of, 2, timeout_s=60, backend="gloo")
    msg = str(e.value)
    assert "\n" not in msg and "bogus0 names no interface here" in msg and "Traceback" not in msg
    assert "lo" in rankerrors.interfaces() and ", ".join(rankerrors.interfaces()) in msg
    assert "Traceback" in e.value.detail and Path(e.value.log).is_file()      # the traceback stays in the log


def test_a_world_that_never_forms_names_master_addr_and_port(monkeypatch, capsys):
    port = launch.free_port()
    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(rankenv, "_joined", False)
    assert cli.run(launch.main, ["--timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"MASTER_ADDR=127.0.0.1 MASTER_PORT={port}" in err and "start all 2 ranks" in err


def test_one_line_wording():
    tb = 'Traceback (most recent call last):\n  File "x", line 1\nValueError: planted\n'
    err = rankerrors.raised(1, 2, tb, "/tmp/r/rank1.log")
    assert str(err) == "rank 1 of 2 failed: ValueError: planted (its output: /tmp/r/rank1.log)" and err.detail
    assert "exit code 7" in str(rankerrors.died(0, 2, 7, "", None))
