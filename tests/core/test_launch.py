import argparse
import importlib.util
import json
import subprocess
import sys
import time
import types
from pathlib import Path

import psutil
import pytest

from helpers.core import launch, rankenv, rankspawn
from tests import rank_workers as w

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _own_tmp(tmp_path, monkeypatch):
    """A failed run keeps its ranks' logs (named in the error): in the test's tmp_path, not in the shared /tmp."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


def _children():
    """Live child processes, except multiprocessing's resource tracker (one per parent, by design)."""
    return [c for c in psutil.Process().children(recursive=True) if c.is_running()
            and c.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(c.cmdline())]


def test_hello_all_reduce_two_ranks():
    res = launch.run(launch.hello, 2, timeout_s=60)            # no launcher's environment here: spawned
    assert res.backend == "gloo" and "gloo" in res.backend_reason
    assert [r["all_reduce_sum"] for r in res.results] == [3.0, 3.0]
    assert [r["rank"] for r in res.results] == [0, 1]


def test_crash_and_hang_names_rank_and_leaves_no_child():
    t0 = time.monotonic()
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.crash_on_one_hang_on_other, 2, timeout_s=30)
    assert e.value.rank == 1
    assert "planted failure on rank 1" in str(e.value)
    assert time.monotonic() - t0 < 30
    assert not _children()


def test_hard_death_is_reported():
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.die_hard, 2, timeout_s=30)
    assert e.value.rank == 0 and "exit code 7" in str(e.value)
    assert not _children()


def test_public_names_live_in_the_split_modules():
    assert launch.spawn is rankspawn.spawn and launch.RankFailed is rankspawn.RankFailed
    assert launch.torchrun is rankenv.torchrun and launch.init_from_env is rankenv.init_from_env
    assert launch.env_rank is rankenv.env_rank and callable(launch.free_port) and callable(launch.choose_backend)


def test_choose_backend_cpu():
    be, why = launch.choose_backend(4)
    assert be in ("gloo", "nccl") and why
    with pytest.raises(ValueError):
        launch.choose_backend(2, "mpi")


def test_notebook_function_refused():
    def local(ctx):
        return 1
    local.__module__ = "__main__"
    with pytest.raises(ValueError, match="importable module"):
        launch.spawn(local, 2)


def test_torchrun_hello():
    """Under torchrun `launch.run` makes each process one rank; rank 0 alone prints every rank's gathered result."""
    res = launch.torchrun("helpers.core.launch", [], nproc=2, timeout_s=120)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 2, (res.stdout, res.stderr[-1500:])
    assert [json.loads(ln)["rank"] for ln in lines] == [0, 1]
    assert all('"all_reduce_sum": 3.0' in ln for ln in lines)
    assert res.stdout.count("started by torchrun") == 1


def test_run_as_one_rank_of_a_launcher(monkeypatch):
    """The launcher's environment decides: this process joins as rank 0 of 1 (world_size=5 is ignored), the result
    comes back in spawn's shape, and a second run in the same process is refused with the fix."""
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(launch.free_port()))
    monkeypatch.setattr(rankenv, "_joined", False)
    assert launch.world_size(5) == 1 and launch.world_sizes([[1, 2], [4]]) == [1] and launch.is_leader()
    res = launch.run(w.env_of, 5, timeout_s=30)
    assert isinstance(res, launch.SpawnResult) and res.world_size == 1 and "torchrun" in res.backend_reason
    assert res.results == ({"rank": 0, "world": 1, "backend": launch.choose_backend(1)[0]},)   # nccl on a GPU
    with pytest.raises(RuntimeError, match="once per process"):
        launch.run(w.env_of, 1)


def test_only_rank_0_emits(monkeypatch, capsys):
    args = argparse.Namespace(json=True, out=None)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert not launch.is_leader() and launch.emit([{"x": 1}], "probe", args) is None
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("RANK", "0")
    assert launch.emit([{"x": 1}], "probe", args)["records"] == [{"x": 1}]
    assert json.loads(capsys.readouterr().out)["kind"] == "probe"


def test_shared_options():
    ap = argparse.ArgumentParser()
    launch.add_args(ap, 2, many=True, timeout_s=30.0)
    a = ap.parse_args(["--world-size", "1,2", "4", "--backend", "gloo"])
    assert launch.world_sizes(a.world_size) == [1, 2, 4] and a.backend == "gloo" and a.timeout == 30.0
    assert launch.world_sizes(ap.parse_args([]).world_size) == [2]
    ap = argparse.ArgumentParser()
    launch.add_args(ap, None, backend=False)
    assert vars(ap.parse_args([])) == {"timeout": 120.0}


def test_worker_of_a_module_run_as_main_is_resolved(monkeypatch):
    """`python -m pkg.mod`: the worker's module is __main__; the launcher finds it under pkg.mod by __qualname__."""
    fake_main = types.ModuleType("__main__")
    fake_main.__spec__ = importlib.util.find_spec("tests.rank_workers")

    def env_of(ctx):                            # stands for tests.rank_workers.env_of seen from __main__
        return None
    env_of.__module__, env_of.__qualname__ = "__main__", "env_of"
    monkeypatch.setitem(sys.modules, "__main__", fake_main)
    assert launch.importable(env_of) is w.env_of
    assert launch.importable(w.env_of) is w.env_of             # an importable function is left alone
    env_of.__qualname__ = "test.<locals>.env_of"
    with pytest.raises(ValueError, match="importable module"):
        launch.importable(env_of)


def test_python_m_module_passes_its_own_worker():
    r = subprocess.run([sys.executable, "-m", "tests.rank_workers"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout) == [{"rank": r_, "world": 2, "backend": "gloo"} for r_ in (0, 1)]


def test_one_tool_spawned_and_under_torchrun_gives_the_same_records():
    """The acceptance test of the launcher: `python -m helpers tensorpar` spawns 2 ranks; under torchrun each process
    is one rank. Same records, and stdout is one JSON document (rank 0 alone printed it)."""
    spawned = subprocess.run([sys.executable, "-m", "helpers", "tensorpar", "--world-size", "2", "--json"], cwd=ROOT,
                             capture_output=True, text=True, timeout=180)
    assert spawned.returncode == 0, spawned.stderr[-2000:]
    tr = launch.torchrun("helpers", ["tensorpar", "--json"], nproc=2, timeout_s=180)
    docs = [json.loads(p.stdout) for p in (spawned, tr)]
    assert tr.stdout.count('"provenance"') == 1
    assert docs[0]["records"] == docs[1]["records"]
    assert {(r["variant"], r["rank"], r["world_size"]) for r in docs[1]["records"]} == \
        {(v, r, 2) for v in ("naive", "dtensor") for r in (0, 1)}


def test_more_ranks_than_the_machine_runs_are_refused_with_why(monkeypatch, capsys):
    """`launch --world-size 9` on a 2-core machine: exit 2 before any rank starts, naming the limit and its reason."""
    import os

    from helpers.core import cli

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert cli.run(launch.main, ["--world-size", "9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "give 1..8 (4 ranks per CPU core, at least 8; this machine has 2 core(s))" in err


def test_torchrun_failure_names_the_root_cause_and_its_error_line():
    """Ranks that fail before joining under torchrun: RankFailed names the root-cause rank and the tool's error line,
    without c10d's C++ log lines."""
    t0 = time.monotonic()
    with pytest.raises(launch.RankFailed) as e:
        launch.torchrun("helpers", ["mesh", "--dp", "1", "--tp", "3"], nproc=2, timeout_s=120)
    msg = str(e.value)
    assert time.monotonic() - t0 < 60 and e.value.rank in (0, 1)
    assert "the launcher started 2 ranks but a 1 × 3 mesh needs dp·tp = 3" in msg and "\n" not in msg
    assert "ProcessGroupGloo.cpp" not in e.value.detail and "[c10d]" not in e.value.detail
