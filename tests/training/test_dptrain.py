import pytest

from helpers.core import launch
from helpers.training.parallel import dptrain
from tests import training_ranks


def test_ddp_and_fsdp_reproduce_single_process_and_zero_formulas():
    refs = [dptrain.train(None, k, "single", training_ranks.DP_STEPS, training_ranks.DP_BATCH)
            for k in training_ranks.DP_KINDS]
    runs = refs + training_ranks.results()["dptrain"]
    diffs = dptrain.max_loss_diff(runs)
    assert set(diffs) == {(k, m) for k in ("mlp", "gpt") for m in ("single", "ddp", "fsdp-grad-op", "fsdp-full")}
    assert max(diffs.values()) < 1e-5
    assert {r.rank for r in runs if r.mode != "single"} == {0, 1}
    for r in runs:
        assert r.measured_bytes == r.zero_formula_bytes, r        # counted bytes = ZeRO's formula exactly
        if r.mode.startswith("fsdp"):
            assert r.params_at_rest_bytes * 2 == r.n_params * 4   # sharded in half at rest
            assert r.grads_bytes * 2 == r.n_params * 4
        if r.mode == "fsdp-grad-op":
            assert r.params_in_step_bytes == r.n_params * 4       # gathered until backward ends (ZeRO-2)


def test_records_flatten_runs():
    rows = dptrain.records([dptrain.train(None, "mlp", "single", steps=2)])
    assert rows[0]["max_loss_diff"] == 0.0 and len(rows[0]["losses"]) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="modes"):
        dptrain.compare(("mlp",), 2, modes=("zero-4",))
    with pytest.raises(ValueError, match="multiple of 2"):
        dptrain.compare(("mlp",), 2, global_batch=7)
    with pytest.raises(ValueError, match="single"):
        dptrain.train(launch.RankContext(0, 2, 0, "gloo", "cpu"), "mlp", "single")
