"""helpers.storage.dataload and helpers.storage.prefetch: cache fills, loader records, read cost, CPU skip (chapter 11)."""
import pytest
import torch

from helpers.storage import dataformats, dataload, prefetch


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    with dataformats.dataset_dir(tmp_path_factory.mktemp("dl"), n_samples=48, shape=(3, 16, 16)) as info:
        yield info


def test_loader_records_and_shared_cache(ds):
    cache = dataformats.SharedCache(dataformats.make("zshard", ds["root"]))
    recs = dataload.measure(cache, fmt="zshard", batch_size=16, num_workers=1, epochs=2)
    assert [r.epoch for r in recs] == [1, 2] and all(r.samples == 48 for r in recs)
    assert cache.hit_fraction == 1.0                      # filled by the worker process, seen by the parent
    r = recs[0]
    assert r.samples_per_s > 0 and r.MB_per_s == pytest.approx(r.samples_per_s * 3 * 16 * 16 * 4 / 1e6, rel=0.01, abs=0.006)  # MB_per_s is rounded to 0.01
    assert r.prefetch_factor == 2 and r.to_device == "cpu"


def test_sweep_and_read_cost(ds):
    recs = dataload.sweep(ds["root"], ("files", "shard"), workers=(0,), batch_sizes=(16, 48))
    assert len(recs) == 4 and all(r.prefetch_factor is None for r in recs)
    cost = dataload.read_cost(ds["root"], "cold")
    assert [c.fmt for c in cost] == ["files", "shard"] and cost[0].files_opened == 48
    assert cost[1].bytes_read < cost[0].bytes_read


def test_prefetch_skips_on_cpu():
    if torch.cuda.is_available():
        pytest.skip("GPU present: the overlap itself runs in the notebook")
    (r,) = prefetch.overlap(2**20, 2)
    assert r.mode == "skipped" and "no host-to-device" in r.note
