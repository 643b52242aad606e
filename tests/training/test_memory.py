import pytest

from helpers.training.calc import memory


def test_zero_paper_example():
    """Rajbhandari et al. (arXiv 1910.02054) Fig. 1: 7.5B parameters, N_d = 64 → 120 / 31.4 / 16.6 / 1.9 GB."""
    got = [round(memory.model_states(7.5e9, z, 64).total_bytes / 1e9, 1) for z in range(4)]
    assert got == [120.0, 31.4, 16.6, 1.9]


def test_fp32_adam_is_16_bytes_too():
    s = memory.model_states(1000, 0, 1, "fp32-adam")
    assert (s.weights_bytes, s.grads_bytes, s.optimizer_bytes) == (4000, 4000, 8000)


def test_activation_formula_korthikanti():
    """arXiv 2205.05198 Table 2, for s=2048, b=1, h=12288, a=96 (GPT-3 175B shape)."""
    s, b, h, a = 2048, 1, 12288, 96
    sbh = s * b * h
    f = memory.activation_bytes_per_layer
    assert f(s, b, h, a) == sbh * (34 + 5 * a * s / h)
    assert f(s, b, h, a, tp=8) == pytest.approx(sbh * (10 + 24 / 8 + 5 * a * s / (h * 8)))
    assert f(s, b, h, a, tp=8, sp=True) == pytest.approx(sbh * (34 + 5 * a * s / h) / 8)
    assert f(s, b, h, a, tp=8, sp=True, recompute="selective") == pytest.approx(34 * sbh / 8)
    assert f(s, b, h, a, recompute="full") == 2 * sbh
    with pytest.raises(ValueError, match="recompute"):
        f(s, b, h, a, recompute="some")
    with pytest.raises(ValueError, match="tp=5"):
        f(s, b, h, a, tp=5)


def test_megatron_1t_shape_and_memory():
    m = memory.ModelShape(n_layers=128, hidden=25600, n_heads=160, vocab=51200, seq_len=2048)
    assert m.n_params / 1e9 == pytest.approx(1008, abs=1)          # "1008.0B" in arXiv 2104.04473 Table 1
    full = memory.per_gpu(m, 1, dp=6, tp=8, pp=64, recompute="full", n_micro=512)
    none = memory.per_gpu(m, 1, dp=6, tp=8, pp=64, recompute="none", n_micro=512)
    assert full.total_bytes < 80e9 < none.total_bytes


def test_bad_input():
    with pytest.raises(ValueError, match="zero_stage"):
        memory.model_states(1e9, 4, 8)
    with pytest.raises(ValueError, match="pp=3"):
        memory.per_gpu(memory.ModelShape(32, 4096, 32), pp=3)


def test_params_must_be_a_plausible_count(capsys):
    from helpers.core import cli

    for bad in ("1e-300", "0.5", "1e300", "nan"):            # issue 35: 1e-300 parameters ran
        assert cli.run(memory.main, ["--params", bad]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--params" in err[0]
    with pytest.raises(ValueError, match="finite parameter count"):
        memory.model_states(float("nan"))
