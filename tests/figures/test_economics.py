"""helpers.figures.economics: the own-vs-rent figure from the default TCO inputs."""
from dataclasses import replace

import pytest

from helpers.economics import tco
from helpers.figures import economics as econfig


def test_utilisation_figure_has_a_curve_per_price_and_a_slider():
    x = tco.TCOInputs()
    fig = econfig.utilisation_figure(x, {"cloud": 2.5, "neocloud": 2.0}, server_prices=(200_000, 300_000))
    assert len(fig.data) == 2 + 2 and len(fig.layout.sliders[0].steps) == 2
    assert [t.visible for t in fig.data[:2]] == [False, True]                  # the middle price is shown first
    own = fig.data[1]
    full = tco.tco(replace(x, server_usd=300_000, utilisation=1.0))
    assert own.y[-1] == pytest.approx(full.usd_per_useful_gpu_hour)
    assert list(fig.data[2].y) == [2.5] * len(own.x)
