"""Figures store their floats rounded (issue 35): the stored JSON is the same whatever the CPU's last bits were."""
import json

import numpy as np
import plotly.graph_objects as go

from helpers.core import plotting


def bundle(fig):
    return plotting.BookRenderer().to_mimebundle(fig.to_dict())


def test_last_bit_differences_store_the_same_figure():
    x = np.linspace(0.1, 40, 200)
    y = np.exp(-x / 7) * 3.3
    a, b = go.Figure(go.Scatter(x=x, y=y)), go.Figure(go.Scatter(x=x, y=np.nextafter(y, np.inf)))
    a.add_vline(x=float(x[17]), annotation_text="τ")
    b.add_vline(x=float(np.nextafter(x[17], 0)), annotation_text="τ")
    assert bundle(a) == bundle(b)                                    # JSON and HTML (the div id hashes the JSON)


def test_typed_arrays_become_rounded_lists_and_integers_stay():
    z = np.array([[1 / 3, 2 / 3], [np.nan, 1e-300]])
    fig = go.Figure(go.Heatmap(z=z, x=np.arange(2), y=["a", "b"]))
    data = bundle(fig)["application/vnd.plotly.v1+json"]["data"][0]
    assert data["z"][0] == [0.333333, 0.666667] and data["z"][1][1] == 1e-300 and data["z"][1][0] is None   # NaN: null in JSON
    assert data["x"]["dtype"].startswith("i") and data["y"] == ["a", "b"]
    json.dumps(data)                                                  # still serialisable


def test_digits_stored_exceed_what_a_reader_sees():
    assert plotting.STORED_DIGITS >= 6            # hover shows 3-4 digits; the build thins to 5 (book/_ext/bookpages.py)
