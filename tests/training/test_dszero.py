"""DeepSpeed ZeRO stages 0-3 on two Gloo ranks (chapter 06): same losses, bytes measured where DeepSpeed keeps them."""
import importlib.util

import pytest

from helpers.core import cli
from helpers.training.parallel import dptrain, dszero
from helpers.training.models import tiny

HAVE = importlib.util.find_spec("deepspeed") is not None
WHY = "deepspeed is not installed (pip install deepspeed==0.19.8)"


def test_config_and_bad_input():
    cfg = dszero.ds_config(3, 2, 8)
    assert cfg["train_batch_size"] == 8 == 2 * cfg["train_micro_batch_size_per_gpu"]
    assert cfg["zero_optimization"]["stage3_param_persistence_threshold"] == 0
    assert "stage3_max_reuse_distance" not in dszero.ds_config(2, 2)["zero_optimization"]
    with pytest.raises(ValueError, match="stages are"):
        dszero.ds_config(4, 2)
    with pytest.raises(ValueError, match="multiple of 2"):
        dszero.ds_config(1, 2, global_batch=7)
    with pytest.raises(ValueError, match="choose among"):
        dszero.compare(stages=(0, 5))
    with pytest.raises(ValueError, match="multiple of 2"):
        dszero.compare(stages=(1,), global_batch=7)
    assert cli.run(dszero.main, ["--stages", "4"]) != 0           # refused by the parser, one line


def test_formulas_and_categories():
    psi = 30_080
    assert dszero.formula_bytes(psi, 0, 2) == (16 * psi, 16 * psi)
    assert dszero.formula_bytes(psi, 3, 2) == (8 * psi, 10 * psi)      # + the 4Ψ/N fp32 master partition
    assert dszero._category("optimizer.optimizer.state[exp_avg_sq]") == "moments"
    assert dszero._category("optimizer.single_partition_of_fp32_groups") == "master"
    assert dszero._category("optimizer.grad_partitions_flat_buffer") == "grads"
    assert dszero._category("param.ds_tensor") == "params"
    assert dszero._category("optimizer.ipg_buckets[torch.float32].buffer") == "buffers"


@pytest.mark.skipif(not HAVE, reason=WHY)
def test_four_stages_run_same_losses_and_measured_bytes():     # about 12 s on 2 cores
    runs = dszero.compare((0, 1, 2, 3), world_size=2, steps=2)
    ref = dptrain.train(None, "gpt", "single", steps=2)
    assert {(r.stage, r.rank) for r in runs} == {(s, k) for s in range(4) for k in range(2)}
    assert dszero.loss_gap(runs) < 1e-5 and dszero.loss_gap(runs, ref.losses) < 1e-5
    psi, n_tensors = ref.n_params, len(list(tiny.build("gpt").parameters()))
    by = {(r.stage, r.rank): r for r in runs}
    for r in runs:
        n_steps = n_tensors if r.stage == 0 else 1     # Adam's fp32 step counter: one per tensor, or one flat
        assert r.moments_bytes == 8 * psi // (1 if r.stage == 0 else 2) + 4 * n_steps
        assert r.master_bytes == (0 if r.stage == 0 else 4 * psi // 2)
        assert r.peak_total_bytes <= r.measured_bytes + r.buffers_bytes
    assert by[0, 0].optimizer_class == "Adam" and by[3, 0].optimizer_class == "DeepSpeedZeroOptimizer_Stage3"
    for k in (0, 1):
        assert by[0, k].params_bytes == by[1, k].params_bytes == by[2, k].params_bytes == 4 * psi
        assert by[0, k].grads_bytes == by[1, k].grads_bytes == 4 * psi         # stage 1: gradients whole
        assert 4 * psi // 2 <= by[2, k].grads_bytes < 4 * psi               # stage 2: shard + in flight
        assert 4 * psi // 2 <= by[3, k].params_bytes < 4 * psi              # stage 3: shard + one module
        held = dict((w, b) for w, _, b in by[3, k].at_rest_where)
        assert held["param.ds_tensor"] == 4 * psi // 2
    assert [by[s, 0].measured_bytes for s in range(4)] == sorted((by[s, 0].measured_bytes for s in range(4)),
                                                                 reverse=True)
