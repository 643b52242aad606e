"""attention, gptmfu and the pipeline simulator refuse sizes up front (issue 28 item 5)."""
import time

import pytest

from helpers.core import cli, resources
from helpers.training.models import attention
from helpers.training.parallel import pipeline
from helpers.training.profiling import gpt_mfu

GiB = 2**30


@pytest.fixture
def sixteen_gib(monkeypatch):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 16 * GiB)


def test_attention_max_sequence(sixteen_gib, capsys):
    assert attention.naive_peak_bytes(1, 1, 1024, 64, 4) == (4 * 1024 * 1024 + 8 * 1024 * 64) * 4
    assert cli.run(attention.main, ["--seq", "128,65536"]) == 2
    err = capsys.readouterr().err
    assert "sequence length 65536" in err and "TiB" in err and "lower --seq" in err


def test_gptmfu_max_layers(sixteen_gib, capsys):
    small = gpt_mfu.training_bytes(8, 256, 512, 4, 8, 64, on_gpu=False)
    assert 16 * 4 * 12 * 512 ** 2 < small < GiB                        # 16 B/param of a 12.6 M-param model + acts
    assert cli.run(gpt_mfu.main, ["--layers", "100000"]) == 2
    assert "100000-layer GPT" in capsys.readouterr().err


def test_pipeline_huge_simulation_refused_fast(sixteen_gib, capsys):
    t0 = time.monotonic()
    assert cli.run(pipeline.main, ["simulate", "--p", "1024", "--m", "100000", "--v", "64"]) == 2
    assert time.monotonic() - t0 < 1.0 and "events, over the limit" in capsys.readouterr().err
    pipeline.check_simulation(4, 8, ["gpipe", "1f1b", "interleaved"], 2)
    assert cli.run(pipeline.main, ["simulate", "--json"]) == 0
