import pytest

from helpers.training.parallel import mesh
from helpers.training.calc import planner


def test_2d_mesh_groups_and_allreduces():
    ranks = mesh.run(dp=2, tp=2)
    grid = planner.rank_grid(dp=2, tp=2, pp=1)
    assert [m.rank for m in ranks] == [0, 1, 2, 3]
    for m, g in zip(ranks, grid):
        assert m.coordinate == (m.rank // 2, m.rank % 2)
        assert list(m.tp_group) == g["tp_group"] and list(m.dp_group) == g["dp_group"]
        assert m.tp_allreduce == m.tp_expected and m.dp_allreduce == m.dp_expected
        assert m.dtensor_sum != m.dtensor_sum or m.dtensor_sum == sum(range(4))
    assert {m.tp_group for m in ranks} == {(0, 1), (2, 3)} and {m.dp_group for m in ranks} == {(0, 2), (1, 3)}


def test_bad_mesh_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        mesh.run(dp=0, tp=2)


def test_cli_under_torchrun():
    """`torchrun --nproc-per-node 2 -m helpers mesh --dp 1 --tp 2`: each process is one rank; rank 0 prints."""
    import json

    from helpers.core import launch

    res = launch.torchrun("helpers", ["mesh", "--dp", "1", "--tp", "2", "--json"], nproc=2, timeout_s=180)
    recs = json.loads(res.stdout)["records"]
    assert [r["rank"] for r in recs] == [0, 1] and all(r["tp_group"] == [0, 1] for r in recs)
    assert all(r["tp_allreduce"] == r["tp_expected"] == 1.0 for r in recs)


def test_launcher_size_must_match_the_mesh(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="nproc_per_node=4"):
        mesh.run(dp=2, tp=2)


def test_more_ranks_than_the_machine_runs_are_refused(monkeypatch, capsys, tmp_path):
    """`mesh --dp 4 --tp 4` on a 2-core machine: exit 2 at once, one line with the limit and why, and nothing is
    spawned or left in the temp dir (issue 35)."""
    import os
    import tempfile

    from helpers.core import cli

    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))     # our own temp dir: other runs cannot interfere
    assert cli.run(mesh.main, ["--dp", "4", "--tp", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "16 local ranks: this machine runs at most 8 (4 ranks per CPU core" in err
    assert "product is at most 8" in err
    assert os.listdir(tmp_path) == []
