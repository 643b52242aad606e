import pytest

from helpers.training.calc import pipeline_schedule
from helpers.training.parallel import pipeline
from tests import training_ranks


@pytest.mark.parametrize("kind", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m", [(2, 1), (2, 8), (4, 4), (4, 16), (8, 8)])
def test_bubble_matches_formula(kind, p, m):
    s = pipeline_schedule.simulate(p, m, kind)
    assert s.bubble_fraction == pytest.approx((p - 1) / m)
    assert s.max_in_flight == (m if kind == "gpipe" else min(p, m))


@pytest.mark.parametrize("p,m,v", [(2, 4, 2), (4, 8, 2), (4, 8, 4), (8, 16, 3)])
def test_interleaved_bubble(p, m, v):
    s = pipeline_schedule.simulate(p, m, "interleaved", v)
    assert s.bubble_fraction == pytest.approx((p - 1) / (v * m))


def test_every_op_once_and_errors():
    for kind in ("gpipe", "1f1b"):
        for ops in pipeline_schedule.schedule(4, 6, kind):
            want = [("F", i) for i in range(6)] + [("B", i) for i in range(6)]
            assert sorted((o.kind, o.mb) for o in ops) == sorted(want)
    with pytest.raises(ValueError, match="divisible"):
        pipeline_schedule.schedule(4, 6, "interleaved", 2)
    with pytest.raises(ValueError, match="schedule"):
        pipeline_schedule.schedule(4, 6, "zero-bubble")


def test_real_two_stage_pipeline_matches_one_process():
    runs = training_ranks.results()["pipeline"]
    assert {(r.schedule, r.rank) for r in runs} == {(k, i) for k in ("gpipe", "1f1b") for i in (0, 1)}
    for r in runs:
        assert r.max_loss_diff < 1e-6 and r.max_param_diff < 1e-6
        assert r.messages_sent == 4                 # one per micro-batch: activations forward or gradients back


def test_real_pipeline_rejects_interleaved():
    with pytest.raises(ValueError, match="gpipe"):
        pipeline.run(2, ("interleaved",))
    with pytest.raises(ValueError, match="stages"):
        pipeline.run(5)
