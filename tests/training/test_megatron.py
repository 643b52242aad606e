"""Megatron-LM arguments from the planner, checked against NVIDIA's published GPT-3 175B launch script."""
from pathlib import Path

import pytest

from helpers.training.calc import megatron, memory, planner

REAL = Path(__file__).parents[1] / "data" / "real" / "megatron" / "train_gpt3_175b_distributed.sh"
GPT3 = memory.ModelShape(n_layers=96, hidden=12288, n_heads=96, vocab=51200, seq_len=2048)


def test_parse_real_script():
    pub = megatron.parse_script(REAL.read_text())
    assert pub["--tensor-model-parallel-size"] == "8" and pub["--pipeline-model-parallel-size"] == "16"
    assert pub["--micro-batch-size"] == "1" and pub["--global-batch-size"] == "1536"
    assert pub["--fp16"] is None and pub["--rampup-batch-size"] == "16 16 5859375"
    assert pub["--attention-backend"] == "auto"          # the trailing comment is dropped


def test_plan_reproduces_published_layout():
    pub = megatron.parse_script(REAL.read_text())
    plan = planner.evaluate(GPT3, planner.Cluster(1536), 1536, dp=12, tp=8, pp=16, zero_stage=1,
                            recompute="selective", micro_batch=1)
    ours = megatron.from_plan(plan, GPT3)
    assert all(r["equal"] for r in megatron.diff(ours, pub))
    assert "--use-distributed-optimizer" in megatron.argv(ours)
    assert megatron.validate(pub, 1536) == {"world_size": 1536, "dp": 12, "tp": 8, "pp": 16, "n_micro": 128}


def test_validate_errors():
    a = megatron.args_for(GPT3, 8, 16, 1, 1536)
    with pytest.raises(ValueError, match="multiple of 128"):
        megatron.validate(a, 1000)
    with pytest.raises(ValueError, match="multiple of 24"):
        megatron.validate(megatron.args_for(GPT3, 8, 16, 2, 1000), 1536)
    with pytest.raises(ValueError, match="ZeRO-1"):
        megatron.args_for(GPT3, 8, 16, 1, 1536, zero_stage=3)
