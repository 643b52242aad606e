"""Hugging Face datasets streaming on local Parquet shards (helpers.storage.hfstream, chapter 11)."""
import numpy as np
import pytest

from helpers.storage import dataformats, hfstream

pytest.importorskip("datasets", reason="Hugging Face datasets not installed (pip install datasets==5.2.0)")


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    d = tmp_path_factory.mktemp("hf")
    imgs, labels = dataformats.synth_images(200, (3, 8, 8), seed=0)
    return hfstream.write_shards(d, imgs, labels, n_shards=4, fmt="arrow"), imgs, labels


def test_parquet_and_arrow_give_the_same_rows(shards, tmp_path):
    files, imgs, labels = shards
    pq = hfstream.write_shards(tmp_path, imgs, labels, n_shards=4, fmt="parquet")
    assert all(f.endswith(".parquet") for f in pq)
    assert list(hfstream.stream(pq)) == list(hfstream.stream(files))


def test_stream_yields_every_row_in_order(shards):
    files, imgs, labels = shards
    ds = hfstream.stream(files)
    rows = list(ds)
    assert [r["idx"] for r in rows] == list(range(200))
    assert rows[7]["label"] == labels[7] and rows[7]["image"] == imgs[7].tobytes()


def test_displacement_of_known_orders():
    d = hfstream.displacement([1, 0, 2, 3], "swap")
    assert d.mean_moved == 0.5 and d.max_moved == 1 and d.max_early == 1 and d.complete
    assert not hfstream.displacement([0, 0, 1], "dup").complete
    assert hfstream.displacement(range(5), "id").mean_moved == 0


def test_buffer_shuffle_is_local_and_seeded(shards):
    files = shards[0][:1]                      # one shard: only the buffer shuffles
    res = hfstream.shuffle_displacement(files, buffer_sizes=(8, 32), seed=0)
    none, b8, b32, full = res
    assert none.mean_moved == 0 and all(r.complete for r in res)
    assert b8.mean_moved < b32.mean_moved < full.mean_moved
    assert b8.max_early < 16 and b32.max_early < 64           # an item leaves at most ~B positions early
    assert res == hfstream.shuffle_displacement(files, buffer_sizes=(8, 32), seed=0)


def test_rank_split_disjoint_and_complete(shards):
    ds = hfstream.stream(shards[0])
    for world in (2, 3):                       # 4 shards: by shard for 2 ranks, by example for 3
        parts = hfstream.rank_split(ds, world)
        flat = [i for p in parts.values() for i in p]
        assert sorted(flat) == list(range(200)) and len(flat) == len(set(flat))
    with pytest.raises(ValueError, match="world_size"):
        hfstream.rank_split(ds, 0)


def test_resume_without_shuffle_is_exact(shards):
    r = hfstream.resume(shards[0], stop_after=70)
    assert r.identical and r.lost == 0 and r.resumed == r.uninterrupted == 130
    with pytest.raises(ValueError, match="stop_after"):
        hfstream.resume(shards[0], stop_after=500)


def test_throughput_same_samples(shards, tmp_path):
    info = dataformats.write_formats(tmp_path, n_samples=200, shape=(3, 8, 8))
    recs = hfstream.throughput({"arrow": shards[0]}, info["root"], batch_size=32, repeats=1)
    assert [r.samples for r in recs] == [200, 200] and all(r.samples_per_s > 0 for r in recs)
    assert recs[0].loader == "hf streaming (arrow)"


def test_bad_input(tmp_path):
    imgs, labels = dataformats.synth_images(4, (1, 2, 2))
    with pytest.raises(ValueError, match="n_shards"):
        hfstream.write_shards(tmp_path, imgs, labels, n_shards=5)
    with pytest.raises(ValueError, match="not found"):
        hfstream.stream([str(tmp_path / "nope.parquet")])
    with pytest.raises(ValueError, match="fmt"):
        hfstream.write_shards(tmp_path, imgs, labels, n_shards=2, fmt="csv")
    (tmp_path / "a.csv").write_text("x")
    with pytest.raises(ValueError, match="parquet"):
        hfstream.stream([str(tmp_path / "a.csv")])
    with pytest.raises(ValueError, match="no shard"):
        hfstream.stream([])


def test_cli_bad_input_exit_2(capsys):
    from helpers.core import cli

    assert cli.run(hfstream.main, ["--samples", "4", "--shards", "8"]) == 2
    assert "--shards" in capsys.readouterr().err
