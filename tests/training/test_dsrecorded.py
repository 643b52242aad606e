"""Chapter 06's Lab 6 without DeepSpeed: the recorded run of the same call, announced; any other call still fails."""
import importlib.util

import pytest

from helpers.training.parallel import dsrecorded, dszero

LAB6 = dict(stages=(0, 1, 2, 3), world_size=2, steps=3)


@pytest.fixture
def no_deepspeed(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "deepspeed" else real(name, *a))


def test_recorded_run_is_lab6_and_says_so(no_deepspeed, capsys):
    runs = dsrecorded.compare_or_recorded(**LAB6)
    assert "DeepSpeed is not installed on this machine" in capsys.readouterr().out
    assert sorted((r.stage, r.rank) for r in runs) == [(s, r) for s in range(4) for r in range(2)]
    assert dszero.loss_gap(runs) < 1e-5                      # what the chapter asserts of a real run
    assert all(isinstance(r.losses, tuple) and r.measured_bytes > 0 for r in runs)


def test_another_call_gets_the_clear_error(no_deepspeed):
    with pytest.raises(RuntimeError, match="deepspeed is not installed"):
        dsrecorded.compare_or_recorded(stages=(3,), world_size=2, steps=3)
