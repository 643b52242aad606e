"""Top-k with error feedback and Local SGD: exact byte counts, the equalities that must hold, and bad input."""
import numpy as np
import pytest

from helpers.network import sparsify as sp


def test_topk_compress_keeps_the_largest_and_the_residual():
    g = np.array([0.1, -3.0, 0.5, 2.0, -0.2])
    sent, res = sp.topk_compress(g, 2, np.zeros(5))
    assert np.array_equal(sent, [0, -3.0, 0, 2.0, 0]) and np.allclose(sent + res, g)
    sent2, res2 = sp.topk_compress(np.zeros(5), 1, res)     # error feedback: the residual is sent next time
    assert sent2[2] == 0.5 and np.allclose(sent2 + res2, res)
    assert sp.topk_compress(g, 2, None)[1] is None


def test_gradient_matches_finite_differences():
    shards, _ = sp.make_data(1, per_worker=16)
    x, y = shards[0]
    p = sp.init_params()
    g, _ = sp._grad(p, x, y)
    rng = np.random.default_rng(0)
    for i in rng.choice(p.size, 6, replace=False):
        e = np.zeros(p.size)
        e[i] = 1e-6
        num = (sp._grad(p + e, x, y)[1] - sp._grad(p - e, x, y)[1]) / 2e-6
        assert abs(num - g[i]) < 1e-5


def test_error_feedback_recovers_what_plain_topk_loses():
    dense = sp.train_topk(1.0, False, steps=80)
    plain, ef = sp.train_topk(0.01, False, steps=80), sp.train_topk(0.01, True, steps=80)
    assert plain.bytes_per_worker_step == ef.bytes_per_worker_step == round(0.01 * 2372) * 8
    assert dense.bytes_per_worker_step == 2372 * 4
    assert ef.final_loss < plain.final_loss and abs(ef.final_loss - dense.final_loss) < abs(plain.final_loss -
                                                                                             dense.final_loss)


def test_local_sgd_h1_is_synchronous_sgd_and_bytes_scale():
    sync = sp.train_topk(1.0, False, steps=40)
    h1, h8 = sp.local_sgd(1, steps=40), sp.local_sgd(8, steps=40)
    assert abs(h1.final_loss - sync.final_loss) < 1e-12 and h1.test_accuracy == sync.test_accuracy
    assert h1.syncs == 40 and h8.syncs == 5 and h1.bytes_per_worker == 8 * h8.bytes_per_worker


def test_bad_input():
    with pytest.raises(ValueError, match="density"):
        sp.train_topk(0, True)
    with pytest.raises(ValueError, match="sync_every"):
        sp.local_sgd(0)
