"""helpers.figures.iodiagrams: the storage diagrams, the loader model and the storage-path figure."""
from helpers.figures import iodiagrams
from helpers.storage import storagepath as sp


def test_cluster_storage_and_stripe_figures_build():
    assert len(iodiagrams.cluster_storage_figure().layout.shapes) > 5
    stripes = iodiagrams.stripe_layout(4 * 2**20, 2**20, 2)
    assert len(iodiagrams.stripe_figure(stripes).data) >= 1


def test_paths_figure_has_a_row_per_path_and_an_arrow_per_hop():
    paths = sp.standard_paths(memcpy_GBps=10.0)
    fig = iodiagrams.paths_figure(paths)
    assert list(fig.layout.yaxis.ticktext) == [p.name for p in reversed(paths)]
    hops = sum(len(p.hops) for p in paths)
    assert len(fig.layout.annotations) == 2 * hops                          # an arrow and a label per hop
    assert [t.name for t in fig.data[:3]] == [sp.DMA, sp.CPU, sp.NET]
