"""The scheduler simulator (helpers.ops.schedsim)."""
import pytest

from helpers.ops import schedsim as s


def test_backfill_never_delays_the_head_and_helps_on_a_synthetic_trace():
    trace = s.synthetic_trace(80, nodes=16, seed=1)
    fifo, bf = s.simulate(trace, 16, "fifo"), s.simulate(trace, 16, "backfill")
    assert bf.mean_wait_s <= fifo.mean_wait_s and bf.utilisation >= fifo.utilisation
    work = sum(j.size * j.runtime_s for j in trace)
    for r in (fifo, bf):
        assert len(r.jobs) == 80 and 0 < r.utilisation <= 1
        assert r.utilisation == pytest.approx(work / (16 * r.makespan_s))


def test_capacity_is_never_exceeded():
    trace = s.synthetic_trace(60, nodes=8, seed=2)
    for policy in s.POLICIES:
        r = s.simulate(trace, 8, policy)
        events = sorted([(j.start_s, j.size) for j in r.jobs] + [(j.end_s, -j.size) for j in r.jobs],
                        key=lambda e: (e[0], e[1]))
        used = 0
        for _, d in events:
            used += d
            assert used <= 8


def test_fifo_and_backfill_on_the_slurm_trace():
    fifo = {j.id: j.start_s for j in s.simulate(s.slurm_check_trace(), 8, "fifo").jobs}
    bf = {j.id: j.start_s for j in s.simulate(s.slurm_check_trace(), 8, "backfill").jobs}
    assert fifo == {1: 0.0, 2: 4.0, 3: 6.0, 4: 6.0}
    assert bf == {1: 0.0, 2: 4.0, 3: 0.0, 4: 6.0}           # job 3 backfilled, job 2 not delayed


def test_preemption_loses_work_and_priority_jobs_wait_less():
    trace = s.synthetic_trace(60, nodes=16, seed=0)
    pre = s.simulate(trace, 16, "priority", preempt=True)
    plain = s.simulate(trace, 16, "priority")
    hi = {j.id for j in trace if j.priority > 0}
    wait = lambda r: sum(x.wait_s for x in r.jobs if x.id in hi) / len(hi)
    assert pre.lost_node_s > 0 and plain.lost_node_s == 0
    assert wait(pre) <= wait(plain)


def test_gang_vs_pod_by_pod():
    two_big = [s.Job(1, 0, 6, 10, 60), s.Job(2, 0, 6, 10, 60)]
    assert s.pod_by_pod(two_big, 8)["deadlock"]
    assert not s.pod_by_pod([s.Job(1, 0, 4, 10, 60), s.Job(2, 0, 4, 10, 60)], 8)["deadlock"]
    r = s.simulate(two_big, 8, "fifo")                       # all-or-nothing: one after the other
    assert [j.start_s for j in r.jobs] == [0.0, 10.0]


def test_bad_input():
    with pytest.raises(ValueError, match="policy"):
        s.simulate(s.slurm_check_trace(), 8, "random")
    with pytest.raises(ValueError, match="more than"):
        s.simulate([s.Job(1, 0, 9, 1, 60)], 8)
