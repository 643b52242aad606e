/* Plotly figures that follow the page (issue 16): loaded, deferred, only on pages with figures.
   - narrow screens (< 640 px): legend below the plot, smaller title, menus inside the figure, margins that fit;
   - dark mode (pydata-sphinx-theme sets html[data-theme]): dark paper, light text and grid; back again in light.
   The stored figure (the notebook output) is not changed: the original layout is kept and restored. */
(function () {
  "use strict";
  var NARROW = 640;
  var DARK = { paper: "#14181e", plot: "#14181e", font: "#d8dde3", grid: "#3a424d", line: "#9aa4ae",
               legend: "rgba(20,24,30,0.8)" };

  function isDark() { return document.documentElement.getAttribute("data-theme") === "dark"; }

  function axes(layout) {
    return Object.keys(layout).filter(function (k) { return /^[xy]axis\d*$/.test(k); });
  }

  function snapshot(gd) {
    if (!gd._bookOriginal) {
      var l = gd.layout || {}, ax = {};
      axes(l).forEach(function (k) { ax[k] = { gridcolor: (l[k] || {}).gridcolor, linecolor: (l[k] || {}).linecolor }; });
      gd._bookOriginal = {
        paper: l.paper_bgcolor, plot: l.plot_bgcolor, font: (l.font || {}).color,
        legend: JSON.parse(JSON.stringify(l.legend || {})), margin: JSON.parse(JSON.stringify(l.margin || {})),
        title: JSON.parse(JSON.stringify(l.title || {})),
        menus: JSON.parse(JSON.stringify(l.updatemenus || [])), axes: ax
      };
    }
    return gd._bookOriginal;
  }

  function themed(gd, o) {
    var u = {}, dark = isDark();
    u.paper_bgcolor = dark ? DARK.paper : (o.paper || "white");
    u.plot_bgcolor = dark ? DARK.plot : (o.plot || "white");
    u["font.color"] = dark ? DARK.font : (o.font || "#444");
    u["legend.bgcolor"] = dark ? DARK.legend : (o.legend.bgcolor || "rgba(255,255,255,0.8)");
    axes(gd.layout).forEach(function (k) {
      var a = o.axes[k] || {};
      u[k + ".gridcolor"] = dark ? DARK.grid : (a.gridcolor || "#e5e5e5");
      u[k + ".linecolor"] = dark ? DARK.line : (a.linecolor || "#444");
    });
    if ((gd.layout.updatemenus || []).length) {
      gd.layout.updatemenus.forEach(function (m, i) {
        u["updatemenus[" + i + "].bgcolor"] = dark ? "#2a3038" : "white";
        u["updatemenus[" + i + "].font.color"] = dark ? DARK.font : "#222";
      });
    }
    return u;
  }

  function sized(gd, o) {
    var u = {}, narrow = gd.clientWidth > 0 && gd.clientWidth < NARROW;
    if (narrow) {
      u.legend = Object.assign({}, o.legend, { orientation: "h", x: 0, xanchor: "left", y: -0.28, yanchor: "top",
                                               font: { size: 10 } });
      u.margin = Object.assign({}, o.margin, { l: 45, r: 10, b: 100, t: Math.max(o.margin.t || 50, 70) });
      u["title.font.size"] = 11;
      u["xaxis.automargin"] = true;
      u["yaxis.automargin"] = true;
      (o.menus || []).forEach(function (m, i) {
        u["updatemenus[" + i + "].x"] = i * 0.5;
        u["updatemenus[" + i + "].xanchor"] = "left";
        u["updatemenus[" + i + "].y"] = 1.0;
        u["updatemenus[" + i + "].yanchor"] = "bottom";
        u["updatemenus[" + i + "].font.size"] = 10;
      });
    } else {
      u.legend = o.legend;
      u.margin = o.margin;
      u["title.font.size"] = (o.title.font || {}).size || null;
      (o.menus || []).forEach(function (m, i) {
        ["x", "xanchor", "y", "yanchor"].forEach(function (k) { u["updatemenus[" + i + "]." + k] = m[k]; });
        u["updatemenus[" + i + "].font.size"] = (m.font || {}).size || null;
      });
    }
    var key = (narrow ? "n" : "w");
    if (gd._bookSize === key) { return null; }
    gd._bookSize = key;
    return u;
  }

  function apply(gd, force) {
    if (!window.Plotly || !gd.layout) { return; }
    var o = snapshot(gd), u = themed(gd, o), s = sized(gd, o);
    if (s) {
      Object.assign(u, s);
      u.legend = Object.assign({}, u.legend, { bgcolor: u["legend.bgcolor"] });  // plotly: not both
      delete u["legend.bgcolor"];
    }
    window.Plotly.relayout(gd, u);
  }

  function all(force) {
    document.querySelectorAll(".plotly-graph-div.js-plotly-plot").forEach(function (gd) { apply(gd, force); });
  }

  function start() {
    all(true);
    new MutationObserver(function () { all(true); })
      .observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    var t = null;
    window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(function () { all(false); }, 150); });
  }

  // Figures are drawn at DOMContentLoaded (see bookpages.py); start after them.
  if (document.readyState === "complete") { start(); } else { window.addEventListener("load", start); }
})();
