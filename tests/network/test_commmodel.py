"""helpers.network.commmodel: the alpha-beta fit, NCCL's trees and the figures (chapters 03 and 08); the cost
formulas are helpers.formulas.comm (tests/formulas/test_comm.py)."""
import numpy as np
import pytest

from helpers.formulas import comm
from helpers.network import commmodel as m

LINK = comm.AlphaBeta.from_link(latency_us=5, bw_GBps=50)


def test_fit_recovers_a_line_and_the_ring_link():
    p = 8
    S = np.logspace(3, 8, 12)
    t = np.array([comm.ring_s(s, p, LINK) for s in S])
    f = m.fit(S, t)
    assert f.max_rel_error < 1e-9
    link = m.link_from_ring_fit(f.line, p)
    assert link.alpha_s == pytest.approx(5e-6) and link.bw_GBps == pytest.approx(50)
    assert f.line.half_bw_bytes == pytest.approx(f.line.alpha_s / f.line.beta_s_per_byte)


def test_fit_rejects_bad_input():
    with pytest.raises(ValueError, match="≥ 2"):
        m.fit([1.0], [1.0])
    with pytest.raises(ValueError, match="> 0"):
        m.fit([1, 2], [0.0, 1.0])
    with pytest.raises(ValueError, match="one-rank"):
        m.link_from_ring_fit(LINK, 1)
    with pytest.raises(ValueError, match="whole number"):
        comm.ring_s(1e6, 0, LINK)


def test_btree_matches_nccl_diagram_and_double_tree_is_complementary():
    # src/graph/trees.cc, 14 ranks: 0-8, 8-(4,12), 4-(2,6), 12-(10,13), 2-(1,3), 6-(5,7), 10-(9,11)
    want = {0: -1, 8: 0, 4: 8, 12: 8, 2: 4, 6: 4, 10: 12, 13: 12, 1: 2, 3: 2, 5: 6, 7: 6, 9: 10, 11: 10}
    assert m.btree(14) == dict(sorted(want.items()))
    for p in (2, 4, 8, 12, 16, 24):
        a, b = m.double_btree(p)
        assert not (m.inner_ranks(a) & m.inner_ranks(b)), p
        assert sorted(a) == sorted(b) == list(range(p))
        assert sum(v == -1 for v in b.values()) == 1


def test_figures_build():
    from helpers.network import ibdiag, ibparse
    from helpers.figures import commfigures

    fig = commfigures.fabric_figure({n: ibdiag.diagnose(ibparse.load_sample(n)) for n in ("healthy", "link_down")})
    assert len(fig.layout.updatemenus[0].buttons) == 2 and len(fig.data) == 6
    assert len(commfigures.model_figure(16, relative=True).data) == len(comm.ALGORITHMS)
    assert len(commfigures.trees_figure(6).data) > 4 and len(commfigures.ring_figure(3).data) == 2
