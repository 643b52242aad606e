"""helpers.figures.compute: the roofline, hierarchical-roofline, sweep and node figures from small inputs."""
import pytest

from helpers.compute import hroofline as h
from helpers.compute import roofline
from helpers.core import plotting, specs
from helpers.figures import compute as compfig


def _records():
    return [{"kind": "gemm", "method": "mamf", "dtype": "fp32", "m": 512, "n": 512, "k": 512, "shape": "512×512×512",
             "tflops": 0.1, "device": "CPU: x"},
            {"kind": "membw", "op": "triad", "backend": "torch", "level": "memory", "flop": 2000, "size_bytes": 12000,
             "time_s": 1e-6, "bw_GBps": 12.0, "device": "CPU: x"}]


def test_roofline_figure_has_menus_and_consistent_visibility():
    hr = roofline.from_spec(specs.lookup("H200"))
    me = roofline.from_bench(_records(), "me")
    fig = compfig.roofline_figure([(hr, [roofline.gemm_kernel(4096, 4096, 4096, "bf16")]),
                                   (me, roofline.kernels_from_bench(_records()))])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    dev_menu, dt_menu = fig.layout.updatemenus
    assert [b.label for b in dev_menu.buttons] == [hr.device, "me"]
    assert "fp32" in [b.label for b in dt_menu.buttons]
    for b in (*dev_menu.buttons, *dt_menu.buttons):
        vis = b.args[0]["visible"]
        assert len(vis) == len(fig.data) and any(vis)
    html = plotting.BookRenderer().to_mimebundle(fig.to_dict())["text/html"]
    assert "Plotly.newPlot" in html and "updatemenus" in html
    with pytest.raises(ValueError, match="at least one"):
        compfig.roofline_figure([])


def test_roofline_widget_builds_its_controls():
    pytest.importorskip("ipywidgets")
    w = compfig.roofline_widget([(roofline.from_spec(specs.lookup("H200")), [])])
    assert len(w.children) == 2 and len(w.children[0].children) == 3


def test_hroofline_figure_draws_one_slope_per_level_and_a_kernel_once_per_level():
    cs = [h.Ceiling("x", "L1", 20000.0, 19000.0, 2**18, 3, 2**15),
          h.Ceiling("x", "L2", 10000.0, 9000.0, 2**25, 3, 2**22), h.Ceiling("x", "HBM", 4000.0, 3900.0, 2**37, 3, 2**30)]
    k = {"name": "softmax", "tflops": 1.5, "intensity": {"L1": 1.25, "L2": 0.8, "HBM": 1.7}}
    fig = compfig.hroofline_figure(cs, [("bf16", 989.0)], [k])
    assert len(fig.data) == 3 + 1 + 1 and list(fig.data[-1].x) == [1.25, 0.8, 1.7]
    with pytest.raises(ValueError, match="at least one"):
        compfig.hroofline_figure([], [("bf16", 1.0)])


def test_sweep_figure_has_a_line_per_device_and_a_marker_per_cache():
    levels = [h.Level("L1d", 48 * 2**10, "t"), h.Level("L2", 2 * 2**20, "t"), h.Level("DRAM", 2**62, "t")]
    pts = [h.SweepPoint("cpu", "numpy", ws, ws, 1e-6, ws / 1e-6 / 1e9, h.classify(ws, levels))
           for ws in (2**14, 2**18, 2**23)]
    fig = compfig.sweep_figure(pts, levels)
    assert len(fig.data) == 1 and len(fig.layout.shapes) == 2 and fig.layout.xaxis.type == "log"


def test_node_diagram_labels_the_datasheet_limits():
    fig = compfig.node_diagram("H200")
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "bench membw" in texts and f"{specs.lookup('H200').hbm_GBps:,.0f} GB/s" in texts
    with pytest.raises(ValueError, match="gpu_specs.yaml"):
        compfig.node_diagram("no such GPU")
