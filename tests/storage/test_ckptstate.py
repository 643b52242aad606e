"""helpers.storage.ckptstate: the state is 14 B/parameter as helpers.training.calc.memory counts it, after one
real Adam step; same_bytes sees one flipped bit; the CLI's model refuses a size below one layer (chapter 04)."""
import copy

import pytest
import torch

from helpers.storage import ckptstate as cs
from helpers.training.calc import memory
from helpers.training.models import tiny


@pytest.fixture(scope="module")
def state():
    return cs.checkpoint_state(tiny.build("gpt", d_model=64, n_layers=2, vocab_size=256, seq_len=32))


def test_state_is_14_bytes_per_parameter(state):
    n = sum(p.numel() for p in state["master"].values())
    s = memory.model_states(n)
    # Adam's per-tensor step counters add 4 bytes per tensor; nothing else
    assert cs.tensor_bytes(state) - (s.weights_bytes + s.optimizer_bytes) == 4 * len(state["master"])
    assert all(t.dtype == torch.bfloat16 for t in state["model"].values())
    assert all(t.dtype == torch.float32 for t in state["master"].values())
    moments = state["optim"]["state"][0]
    assert moments["exp_avg"].abs().sum() > 0 and moments["exp_avg_sq"].abs().sum() > 0   # one real Adam step


def test_same_bytes_sees_one_flipped_bit(state):
    other = copy.deepcopy(state)
    t = other["master"][next(iter(other["master"]))]
    t.view(torch.int32).view(-1)[0] ^= 1
    assert not cs.same_bytes(state, other)
    assert not cs.same_bytes({"a": torch.zeros(2)}, {"a": torch.zeros(2, dtype=torch.float64)})


def test_mlp_size_and_refusal():
    model = cs.mlp(3 * (256 * 256 + 256), width=256)
    assert sum(p.numel() for p in model.parameters()) == 3 * (256 * 256 + 256)
    with pytest.raises(ValueError, match="one 256×256 layer"):
        cs.mlp(1000, width=256)
    with pytest.raises(ValueError, match="no parameters"):
        cs.checkpoint_state(torch.nn.ReLU())
