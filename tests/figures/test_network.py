"""helpers.figures.network: the incast, RDMA-stack, overlap-trace and fabric figures from small inputs."""
from helpers.figures import network as netfig
from helpers.network import congestion, fabric, overlap, verbs


def test_congestion_figure_has_a_trace_per_mode_and_panel():
    _, series = congestion.compare(duration_us=200)
    fig = netfig.congestion_figure(series)
    assert len(fig.data) == len(congestion.MODES) * 4
    assert sum(t.showlegend for t in fig.data) == len(congestion.MODES)          # one legend entry per mode


def test_stack_figure_groups():
    fig = netfig.stack_figure()
    texts = {a.text for a in fig.layout.annotations}
    assert {"Magnum IO", "OFED"} <= texts and len(fig.layout.shapes) == len(verbs.STACK) + 2


def test_overlap_figure_has_a_bar_per_interval():
    iv = overlap.Interval
    lanes = {"serial": [iv("step", "main thread", 0.0, 0.010), iv("gloo:all_reduce", "comm thread", 0.0, 0.004),
                        iv("compute", "main thread", 0.004, 0.006)],
             "overlapped": [iv("step", "main thread", 0.0, 0.007), iv("compute", "main thread", 0.0, 0.006)]}
    fig = netfig.overlap_figure(lanes)
    assert len(fig.data) == 5 and fig.data[1].y == ("serial: comm thread",)


def test_topology_figure_layers_a_fat_tree_and_lays_out_anything_else():
    g = fabric.fat_tree_graph(2)
    fig = netfig.topology_figure(g, "two nodes")
    kinds = [t.name for t in fig.data[1:]]
    assert fig.data[0].name == "cables" and kinds[0] == "gpu" and set(kinds) <= {"gpu", "leaf", "spine", "core"}
    assert sum(len(t.x) for t in fig.data[1:]) == g.number_of_nodes()
    assert len(netfig.topology_figure(fabric.torus_graph(3, 2)).data) == 2          # cables + one kind of node
