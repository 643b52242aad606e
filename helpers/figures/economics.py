"""Figures of the economics chapters, drawn from the ``helpers.economics`` models (chapter 21).

* :func:`utilisation_figure` — cost per useful GPU-hour against utilisation, owning (``economics.tco``, a slider
  picks the server price) against renting at fixed prices (chapter 21).

    from helpers.figures import economics as econfig
    econfig.utilisation_figure(x, rent)        # x: a tco.TCOInputs, rent: {name: USD per GPU-hour}
"""
from __future__ import annotations

from dataclasses import replace

from helpers.core import plotting
from helpers.economics import tco


def utilisation_figure(x: tco.TCOInputs, rent_usd_per_gpu_hour: dict[str, float],
                       server_prices=(200_000, 300_000, 400_000)):
    """Cost per useful GPU-hour vs utilisation, owning (one curve per server price, chosen with a slider) against
    renting at fixed prices — the plotly control works in the static book, without a kernel."""
    us = [u / 100 for u in range(20, 101, 5)]
    fig = plotting.figure(title="Own vs rent: cost per useful GPU-hour", xaxis_title="utilisation (fraction of hours)",
                          yaxis_title="USD per useful GPU-hour")
    for sp in server_prices:
        cost = [tco.tco(replace(x, server_usd=sp, utilisation=u)).usd_per_useful_gpu_hour for u in us]
        fig.add_scatter(x=us, y=cost,
                        name=f"own, server ${sp:,.0f}", visible=sp == server_prices[len(server_prices) // 2])
    for name, price in rent_usd_per_gpu_hour.items():
        fig.add_scatter(x=us, y=[price] * len(us), name=f"rent: {name}", line=dict(dash="dot"))
    n_own, n_all = len(server_prices), len(fig.data)
    steps = [dict(method="update", label=f"${sp / 1000:.0f}k",
                  args=[{"visible": [j == i for j in range(n_own)] + [True] * (n_all - n_own)}])
             for i, sp in enumerate(server_prices)]
    fig.update_layout(sliders=[dict(active=len(server_prices) // 2, steps=steps,
                                    currentvalue=dict(prefix="8-GPU server price: "), pad=dict(t=50))])
    return fig
