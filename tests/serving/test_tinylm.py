"""helpers.serving.tinylm: the serving chapter's causal model — (B, T) → (B, T, V), and causal."""
import pytest
import torch

from helpers.serving import tinylm


def test_shape_seed_and_causality():
    m = tinylm.build(seed=0, vocab=32, seq_len=16, d_model=32, n_layers=1, n_heads=4).eval()
    x = torch.randint(0, 32, (2, 10), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        y = m(x)
        assert y.shape == (2, 10, 32)
        x2 = x.clone()
        x2[:, -1] = (x2[:, -1] + 1) % 32                  # change the last token only
        assert torch.allclose(m(x2)[:, :-1], y[:, :-1], atol=1e-6)   # earlier positions cannot see it
    same = tinylm.build(seed=0, vocab=32, seq_len=16, d_model=32, n_layers=1, n_heads=4)
    assert all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), same.state_dict().values()))
    with pytest.raises(ValueError, match="divisible"):
        tinylm.TinyLM(d_model=30, n_heads=4)
