import time

import psutil
import pytest

from helpers.core import launch
from tests import rank_workers as w


def _children():
    """Live child processes, except multiprocessing's resource tracker (one per parent, by design)."""
    return [c for c in psutil.Process().children(recursive=True) if c.is_running()
            and c.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(c.cmdline())]


def test_hello_all_reduce_two_ranks():
    res = launch.spawn(launch.hello, 2, timeout_s=60)
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


def test_hang_times_out_naming_rank():
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.hang_on_rank, 2, 1, timeout_s=20)
    # on a loaded machine rank 0 may still be starting too; rank 1 is always among the hung
    assert 1 in e.value.ranks and "timeout" in str(e.value)
    assert not _children()


def test_hard_death_is_reported():
    with pytest.raises(launch.RankFailed) as e:
        launch.spawn(w.die_hard, 2, timeout_s=30)
    assert e.value.rank == 0 and "exit code 7" in str(e.value)
    assert not _children()


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
    res = launch.torchrun("helpers.core.launch", [], nproc=2, timeout_s=120)
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    assert len(lines) == 2, (res.stdout, res.stderr[-1500:])
    assert all('"all_reduce_sum": 3.0' in ln for ln in lines)
