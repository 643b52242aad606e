"""Chapter 14: bit-identical resume, DCP resharding 4 → 2 ranks, async vs sync checkpoint."""
import numpy as np
import pytest

from helpers.core import launch
from helpers.training.resilience import ckpt


def test_full_resume_is_bit_identical():
    r = ckpt.resume_check(total_steps=8, stop_at=3)
    assert r.bit_identical and r.max_abs_diff == 0.0 and r.final_loss == r.reference_loss


@pytest.mark.parametrize("piece", ["rng", "data", "optim"])
def test_leaving_out_a_piece_breaks_identity(piece):
    r = ckpt.resume_check(total_steps=8, stop_at=3, leave_out=(piece,))
    assert not r.bit_identical and r.max_abs_diff > 0


def test_loader_position_is_state():
    a = ckpt.Loader(16, 4, seed=3)
    seen = [a.next_indices() for _ in range(5)]          # crosses an epoch boundary
    b = ckpt.Loader(16, 4, seed=0)
    b.load_state_dict(a.state_dict())
    assert (a.next_indices() == b.next_indices()).all()
    assert sorted(np.concatenate([s.numpy() for s in seen[:4]]).tolist()) == list(range(16))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="stop_at"):
        ckpt.resume_check(total_steps=4, stop_at=4)
    with pytest.raises(ValueError, match="mode"):
        ckpt.stall_bench("later")
    with pytest.raises(ValueError, match="batch_size"):
        ckpt.Loader(4, 8)


def test_async_checkpoint_writes_the_same_bytes(tmp_path):
    s = ckpt.stall_bench("sync", steps=4, every=2, width=64, folder=str(tmp_path))
    a = ckpt.stall_bench("async", steps=4, every=2, width=64, folder=str(tmp_path))
    assert s.checkpoints == a.checkpoints == 2 and s.checkpoint_bytes == a.checkpoint_bytes > 0


def test_dcp_async_save_on_a_1_rank_gloo_group(tmp_path):
    none, s, a = launch.run(ckpt.stall_worker, 1, ("none", "sync", "async"), 4, 2, 64, str(tmp_path),
                            backend="gloo", timeout_s=120).results[0]     # gloo on a GPU machine too
    assert none.checkpoints == 0 and none.checkpoint_bytes == 0
    assert s.checkpoints == a.checkpoints == 2 and s.checkpoint_bytes == a.checkpoint_bytes > 0
    assert list(tmp_path.iterdir()) == []                 # each run's folders were removed with its temp dir


def test_save_is_atomic(tmp_path):
    p = tmp_path / "c.pt"
    n = ckpt.save({"x": 1}, p)
    assert n == p.stat().st_size and [f.name for f in tmp_path.iterdir()] == ["c.pt"]


def test_dcp_saved_on_4_ranks_loads_on_2(tmp_path):
    path = str(tmp_path / "dcp")
    saved = launch.run(ckpt.dcp_save, 4, path, timeout_s=180)
    loaded = launch.run(ckpt.dcp_load, 2, path, timeout_s=180)
    a, b = saved.results[0]["full"], loaded.results[0]["full"]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert sum(r["local_params"] for r in saved.results) == sum(r["local_params"] for r in loaded.results)
    assert len(list((tmp_path / "dcp").glob("*.distcp"))) == 4
