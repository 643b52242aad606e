import pytest

from helpers.training.parallel import seqpar


@pytest.fixture(scope="module")
def checks():
    return seqpar.run(world_size=2, seq=8, batch=2, d_model=16)


def test_tp_and_sp_match_one_process(checks):
    assert {(c.variant, c.rank) for c in checks} == {(v, r) for v in ("reference", "tp", "tp+sp") for r in (0, 1)}
    for c in checks:
        assert max(c.max_err_out, c.max_err_grad_x, c.max_err_grad_params) < 1e-5, c


def test_sp_divides_layernorm_dropout_activations_by_t(checks):
    by = {(c.variant, c.rank): c for c in checks}
    for r in (0, 1):
        tp, sp = by[("tp", r)], by[("tp+sp", r)]
        assert sp.local_seq == 4 and tp.local_seq == 8
        assert sp.ln_dropout_saved_bytes * 2 == tp.ln_dropout_saved_bytes > 0
        assert sp.mlp_saved_bytes == tp.mlp_saved_bytes          # the MLP region is split by TP in both
        assert tp.mlp_saved_bytes < by[("reference", r)].mlp_saved_bytes


def test_bad_split_is_named():
    with pytest.raises(ValueError, match="split"):
        seqpar.run(world_size=3, seq=8, d_model=16)
    with pytest.raises(ValueError, match="dropout"):
        seqpar.run(world_size=2, p_drop=1.0)


def test_cli_under_torchrun():
    """`torchrun --nproc-per-node 2 -m helpers seqpar`: each process is one rank; rank 0 alone prints the record."""
    import json

    from helpers.core import launch

    res = launch.torchrun("helpers", ["seqpar", "--json"], nproc=2, timeout_s=180)
    recs = json.loads(res.stdout)["records"]
    assert {(r["variant"], r["rank"]) for r in recs} == {(v, r) for v in ("reference", "tp", "tp+sp") for r in (0, 1)}
    assert all(max(r["max_err_out"], r["max_err_grad_x"], r["max_err_grad_params"]) < 1e-5 for r in recs)
