import pytest
import torch

from helpers.training.models import tiny


@pytest.mark.parametrize("kind", tiny.KINDS)
def test_seeded_and_learnable(kind):
    a, b = tiny.build(kind, seed=3), tiny.build(kind, seed=3)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    x, y = tiny.make_batch(kind, 8, seed=1)
    x2, _ = tiny.make_batch(kind, 8, seed=1)
    assert torch.equal(x, x2)
    loss_of = tiny.loss_fn(kind)
    opt = torch.optim.Adam(a.parameters(), lr=1e-2)
    first = loss_of(a(x), y).item()
    for _ in range(20):
        opt.zero_grad()
        loss = loss_of(a(x), y)
        loss.backward()
        opt.step()
    assert loss.item() < 0.5 * first


def test_no_parameters_on_the_root():
    """FSDP shards module by module: every parameter must live in a child unit."""
    gpt = tiny.build("gpt")
    units = [gpt.embed, *gpt.blocks, gpt.head]
    assert sum(tiny.count_params(u) for u in units) == tiny.count_params(gpt)


def test_stages_cover_the_model():
    mlp = tiny.build("mlp")
    for n in (1, 2, 4):
        parts = tiny.stages(mlp, n)
        assert len(parts) == n and sum(tiny.count_params(p) for p in parts) == tiny.count_params(mlp)
        x, _ = tiny.make_batch("mlp", 4)
        out = x
        for p in parts:
            out = p(out)
        assert torch.allclose(out, mlp(x))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="n_heads"):
        tiny.GPTConfig(d_model=30, n_heads=4)
    with pytest.raises(ValueError, match="kind"):
        tiny.build("cnn")
    with pytest.raises(ValueError, match="1..4 stages"):
        tiny.stages(tiny.build("mlp"), 5)
