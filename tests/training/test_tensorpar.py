import pytest

from helpers.training.parallel import tensorpar
from tests import training_ranks


def test_column_row_split_matches_single_device():
    checks = training_ranks.results()["tensorpar"]
    assert {(c.variant, c.rank) for c in checks} == {("naive", 0), ("naive", 1), ("dtensor", 0), ("dtensor", 1)}
    for c in checks:
        if c.note.startswith("skipped"):
            continue
        assert max(c.max_err_out, c.max_err_grad_x, c.max_err_grad_w1, c.max_err_grad_w2) < 1e-5, c
        assert c.local_fc1_params == (32 * 128 + 128) // 2      # half of A and its bias on each rank
        assert c.allreduce_bytes_fwd == 2 * 4 * 32 * 4          # one (batch, seq, h) fp32 tensor


def test_bad_split_is_named():
    with pytest.raises(ValueError, match="split"):
        tensorpar.run(3, d_model=32)
