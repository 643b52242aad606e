"""helpers.storage.ckptwrite: the sharded parallel writer reloads to the same bytes as the naive single file; bad
input is refused; no file is left behind (chapter 04)."""
import os

import pytest
import torch

from helpers.storage import ckptstate
from helpers.storage import ckptwrite as cw
from helpers.training.models import tiny


@pytest.fixture(scope="module")
def state():
    return ckptstate.checkpoint_state(tiny.build("gpt", d_model=64, n_layers=2, vocab_size=256, seq_len=32))


def test_sharded_reloads_identical_to_single(state, tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "many").mkdir()
    cw.write_single(state, tmp_path / "one", fsync=True)
    files = cw.write_sharded(state, tmp_path / "many", n_shards=3, threads=3, fsync=False)
    assert len(files) == 4 and files[-1].name == cw.INDEX
    one, many = cw.load_single(tmp_path / "one"), cw.load_sharded(tmp_path / "many")
    assert ckptstate.same_bytes(one, many) and ckptstate.same_bytes(one, state)
    assert not list(tmp_path.rglob("*.tmp"))


def test_plan_shards_balances_bytes():
    tensors = {f"k{i}": torch.zeros(n) for i, n in enumerate([100, 90, 50, 40, 30, 20, 10])}
    parts = cw.plan_shards(tensors, 3)
    loads = sorted(sum(t.numel() for t in p.values()) for p in parts)
    assert sum(loads) == 340 and loads[-1] - loads[0] <= 20
    assert sorted(k for p in parts for k in p) == sorted(tensors)
    with pytest.raises(ValueError, match="n_shards=8"):
        cw.plan_shards(tensors, 8)


def test_bench_cleans_up_and_reports(state, tmp_path):
    recs = cw.bench(state, tmp_path, shards=(2,), fsync=(False, True), repeats=1, warmup=0)
    assert [(r.method, r.fsync) for r in recs] == [("single", False), ("single", True), ("sharded", False),
                                                 ("sharded", True)]
    assert all(r.verified and r.bw_GBps > 0 and r.size_bytes >= ckptstate.tensor_bytes(state) for r in recs)
    assert abs(recs[0].bw_GBps - recs[0].size_bytes / recs[0].time_s / 1e9) < 1e-9
    assert os.listdir(tmp_path) == []
    rows = cw.extrapolate(recs, 0.98e12)
    assert rows[0]["time_s"] == pytest.approx(0.98e12 / (recs[0].bw_GBps * 1e9), rel=1e-2, abs=0.1)


def test_failed_write_leaves_nothing(state, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(torch, "save", boom)
    with pytest.raises(OSError, match="disk full"):
        cw.write_sharded(state, tmp_path, n_shards=2)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError, match="did not finish"):
        cw.load_sharded(tmp_path)


def test_cli(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert cw.main(["--path", str(tmp_path), "--params", "3e5", "--width", "256", "--shards", "2",
                    "--fsync", "on", "--repeats", "1", "--out", str(out)]) == 0
    import json

    doc = json.loads(out.read_text())
    assert doc["kind"] == "ckptwrite" and len(doc["records"]) == 2 and doc["records"][0]["device"] == "cpu"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_cli_refuses_bad_input(capsys, tmp_path):
    from helpers.core import cli

    assert cli.run(cw.main, ["--params", "0"]) != 0
    assert "--params" in capsys.readouterr().err
    with pytest.raises(ValueError, match="threads=0"):
        cw.write_sharded({"a": torch.zeros(1), "b": torch.zeros(1)}, tmp_path, 2, threads=0)
    assert list(tmp_path.iterdir()) == []               # refused before anything was written
