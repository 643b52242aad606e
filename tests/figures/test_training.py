"""helpers.figures.training: the ZeRO, memory-calculator, pipeline and tensor-parallel figures from small inputs."""
import pytest

from helpers.figures import training as trainfig
from helpers.training.calc import memory, pipeline_schedule


def test_zero_figure_stacks_the_paper_numbers():
    fig = trainfig.zero_figure(7.5e9, dp=64)
    assert [t.name for t in fig.data] == ["weights", "grads", "optimizer"]
    totals = [sum(t.y[i] for t in fig.data) for i in range(4)]
    assert [round(x, 1) for x in totals] == [120.0, 31.4, 16.6, 1.9]      # ZeRO, arXiv 1910.02054 Fig. 1


def test_memory_figure_has_slider_and_dropdown():
    m = memory.ModelShape(n_layers=32, hidden=4096, n_heads=32)
    fig = trainfig.memory_figure(m, 80, dps=(1, 8))
    assert len(fig.layout.sliders[0].steps) == 2 and len(fig.layout.updatemenus[0].buttons) == 3
    assert len(fig.data) == 12


def test_timeline_figure_has_both_kinds():
    fig = trainfig.timeline_figure(pipeline_schedule.simulate(2, 3, "1f1b").events)
    assert {t.name for t in fig.data} == {"forward", "backward"}
    assert sum(len(t.x) for t in fig.data) == 2 * 2 * 3                 # F and B of 3 micro-batches on 2 stages


@pytest.mark.parametrize("world_size", [1, 4])
def test_split_figure(world_size):
    fig = trainfig.split_figure(world_size, d_model=8)
    assert len(fig.data) == 2 and fig.data[0].z.shape == (8, 32) and fig.data[0].z.max() == world_size - 1
