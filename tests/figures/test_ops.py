"""helpers.figures.ops: the MIG, sharing, schedule and metric figures from small inputs of the ops wing."""
from helpers.figures import ops as opsfig
from helpers.ops import exporter, mig, schedsim, sharing


def test_mig_layout_draws_every_instance():
    plan = mig.pack("H200-141GB", ["3g.71gb", "3g.71gb", "1g.18gb"])
    fig = opsfig.mig_layout("H200-141GB", plan.gpus)
    assert len(fig.data) == sum(len(b) for b in plan.gpus) == 3
    assert fig.layout.xaxis.range == (0, 8)


def test_sharing_bars_group_idle_and_busy():
    r = sharing.SharingResult
    busy = [r("mig", 10, 2.0, 3.0, 0.5, 0.1), r("time-slice", 10, 2.0, 9.0, 0.5, 0.1)]
    quiet = [r("mig", 10, 2.0, 3.0, 0.0, 0.5), r("time-slice", 10, 2.0, 2.5, 0.0, 0.5)]
    fig = opsfig.sharing_bars(busy, quiet)
    assert [t.name for t in fig.data] == ["neighbour idle", "neighbour training"]
    assert list(fig.data[1].y) == [3.0, 9.0]


def test_gantt_has_a_bar_per_job():
    sim = schedsim.simulate(schedsim.synthetic_trace(8, nodes=4, seed=0), 4, "backfill")
    fig = opsfig.gantt(sim)
    assert len(fig.data) == len(sim.jobs) == 8 and fig.layout.title.text == "backfill: schedule"


def test_metric_lines_one_line_per_metric_and_gpu():
    samples = [exporter.Sample(t, "util", g, v) for t in (0.0, 0.5) for g, v in (("0", 10.0), ("1", 20.0))]
    fig = opsfig.metric_lines(samples + [{"t_s": 0.0, "metric": "power", "gpu": "0", "value": 300.0}],
                              ["util", "power"], "test", "value")
    assert [t.name for t in fig.data] == ["util (0)", "util (1)", "power (0)"]
