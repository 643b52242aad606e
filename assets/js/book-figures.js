/* Plotly figures that follow the page (issues 16 and 29): loaded, deferred, only on pages with figures.
   The book's responsive rule for every figure type lives here, in one place, and runs in the reader's browser, so
   the same stored figure JSON reads at 390 px and at 1366 px (no server, no re-executed notebook):
   1. title: wrapped to the figure's width (smaller on phones), anchored at the top; the top margin makes room;
   2. legend (phones, < 640 px): horizontal, ABOVE the plot under the title (never below, where it met tick labels
      and sliders); update menus above the legend; the margin is measured after drawing, not guessed;
   3. sliders: pushed below the x tick labels and axis title (measured), the bottom margin grows to hold them;
   4. axes: automargin (long tick labels and titles are never cut); tick labels that still collide are thinned
      (log axes to 1-2-5 then to decades, linear axes to fewer ticks);
   5. plot height: never under MIN_PLOT px (timelines with one row per device were 40-100 px tall on phones);
   6. labels on points and bars: a label that would cover another text or leave the figure is dropped, greedily in
      trace order (hover still shows it); heatmap cell texts shrink with the cell and hide when cells are too small;
   7. dark mode (pydata-sphinx-theme sets html[data-theme]): dark paper, light text and grid; back again in light.
   The original layout and texts are kept and every width starts from them (resize, rotate). */
(function () {
  "use strict";
  var NARROW = 640, MIN_PLOT = 150, TOL = 2;
  var DARK = { paper: "#14181e", plot: "#14181e", font: "#d8dde3", grid: "#3a424d", line: "#9aa4ae",
               legend: "rgba(20,24,30,0.8)" };

  function isDark() { return document.documentElement.getAttribute("data-theme") === "dark"; }
  function copy(x) { return x === undefined ? undefined : JSON.parse(JSON.stringify(x)); }
  function axes(layout) { return Object.keys(layout).filter(function (k) { return /^[xy]axis\d*$/.test(k); }); }

  function snapshot(gd) {
    if (!gd._bookOriginal) {
      var l = gd.layout || {}, ax = {}, t = l.title;
      axes(l).forEach(function (k) { ax[k] = copy(l[k] || {}); });
      gd._bookOriginal = {
        paper: l.paper_bgcolor, plot: l.plot_bgcolor, font: (l.font || {}).color,
        legend: copy(l.legend || {}), margin: copy(l.margin || {}), height: l.height,
        title: typeof t === "string" ? { text: t } : copy(t || {}),
        menus: copy(l.updatemenus || []), sliders: copy(l.sliders || []), axes: ax,
        annVisible: (l.annotations || []).map(function (a) { return a.visible; }),
        annotations: copy(l.annotations || []),
        names: gd.data.map(function (tr) { return tr.name; }),
        texts: gd.data.map(function (tr) { return copy(tr.text); }),
        textpos: gd.data.map(function (tr) { return tr.textposition; }),
        textfont: gd.data.map(function (tr) { return copy(tr.textfont); }),
        texttemplate: gd.data.map(function (tr) { return tr.texttemplate; })
      };
    }
    return gd._bookOriginal;
  }

  function themed(gd, o) {
    var u = {}, dark = isDark();
    u.paper_bgcolor = dark ? DARK.paper : (o.paper || "white");
    u.plot_bgcolor = dark ? DARK.plot : (o.plot || "white");
    u["font.color"] = dark ? DARK.font : (o.font || "#444");
    axes(gd.layout).forEach(function (k) {
      var a = o.axes[k] || {};
      u[k + ".gridcolor"] = dark ? DARK.grid : (a.gridcolor || "#e5e5e5");
      u[k + ".linecolor"] = dark ? DARK.line : (a.linecolor || "#444");
    });
    (gd.layout.updatemenus || []).forEach(function (m, i) {
      u["updatemenus[" + i + "].bgcolor"] = dark ? "#2a3038" : "white";
      u["updatemenus[" + i + "].font.color"] = dark ? DARK.font : "#222";
    });
    return u;
  }

  function wrap(text, perLine) {     // break at spaces so that no line is longer than perLine characters
    return String(text || "").split(/<br\s*\/?>/i).map(function (line) {
      var out = [], cur = "";
      line.split(" ").forEach(function (w) {
        if (cur && (cur + " " + w).replace(/<[^>]+>/g, "").length > perLine) { out.push(cur); cur = w; }
        else { cur = cur ? cur + " " + w : w; }
      });
      out.push(cur);
      return out.join("<br>");
    }).join("<br>");
  }

  function legendShown(gd) {
    var fl = gd._fullLayout || {};
    return fl.showlegend !== false && !!gd.querySelector(".legend");
  }

  function height(sel, gd) {
    var el = gd.querySelector(sel);
    if (!el) { return 0; }
    var r = el.getBoundingClientRect();
    return r.height;
  }

  /* pass 1: title, legend and menus placed for this width; margins from estimates */
  function firstPass(gd, o, width) {
    var narrow = width < NARROW, u = {};
    var fs = narrow ? 12 : ((o.title.font || {}).size || 16);
    var text = wrap(o.title.text, Math.max(18, Math.floor((width - 24) / (fs * 0.56))));
    var lines = text ? text.split("<br>").length : 0;
    gd._bookTitleH = lines ? Math.ceil(lines * fs * 1.3) + 20 : 6;
    u.title = Object.assign({}, o.title, { text: text, x: 0.01, xanchor: "left", xref: "container", yref: "container",
                                           y: 1, yanchor: "top", pad: { t: 14 },
                                           font: Object.assign({}, o.title.font || {}, { size: fs }) });
    u.margin = Object.assign({}, o.margin, { t: Math.max(gd._bookTitleH + 6, narrow ? 0 : (o.margin.t || 0)) });
    if (narrow) { u.margin.l = Math.min(o.margin.l || 60, 40); u.margin.r = Math.min(o.margin.r || 20, 12); }
    var above = narrow || (o.legend.orientation === "h" && o.legend.y !== undefined && o.legend.y < 0);
    gd._bookAbove = above;
    u.legend = above ? Object.assign({}, o.legend, { orientation: "h", x: 0, xanchor: "left", y: 1, yanchor: "bottom",
                                                      yref: "paper", font: { size: narrow ? 10 : ((o.legend.font || {}).size || 12) } }) : copy(o.legend);
    axes(gd.layout).forEach(function (k) {   // x titles wrap to the plot's width on a phone
      var tt = (o.axes[k] || {}).title, text = typeof tt === "string" ? tt : (tt || {}).text;
      if (text && k[0] === "x") { u[k + ".title.text"] = narrow ? wrap(text, Math.floor((width - 110) / 7)) : text; }
    });
    // a menu's label annotation ("dtype:") ends where its menu starts, at every width
    o.annotations.forEach(function (a, i) {
      u["annotations[" + i + "].x"] = a.x; u["annotations[" + i + "].xanchor"] = a.xanchor || null;
      if (a.yref !== "paper" || !(a.y >= 1) || !/:\s*$/.test(a.text || "")) { return; }
      var next = o.menus.filter(function (m) { return m.x > a.x && (m.xanchor || "right") === "left"; })
        .sort(function (m, n) { return m.x - n.x; })[0];
      if (next) { u["annotations[" + i + "].x"] = next.x - 0.005; u["annotations[" + i + "].xanchor"] = "right"; }
    });
    u.legend.bgcolor = isDark() ? DARK.legend : (o.legend.bgcolor || "rgba(255,255,255,0.8)");
    axes(gd.layout).forEach(function (k) {
      u[k + ".automargin"] = true;
      ["dtick", "nticks", "tick0"].forEach(function (p) { u[k + "." + p] = (o.axes[k] || {})[p] === undefined ? null : o.axes[k][p]; });
    });
    if (o.height) { u.height = o.height; }
    o.annVisible.forEach(function (v, i) { u["annotations[" + i + "].visible"] = v === undefined ? true : v; });
    o.menus.forEach(function (m, i) {
      ["x", "xanchor", "y", "yanchor"].forEach(function (k) { u["updatemenus[" + i + "]." + k] = m[k] === undefined ? null : m[k]; });
      u["updatemenus[" + i + "].font.size"] = narrow ? 10 : ((m.font || {}).size || null);
    });
    o.sliders.forEach(function (s, i) { u["sliders[" + i + "].pad.t"] = ((s.pad || {}).t === undefined) ? null : s.pad.t; });
    return u;
  }

  /* pass 2: measured legend, menus and x labels decide the margins; the plot keeps MIN_PLOT px */
  function secondPass(gd, o, width) {
    var narrow = width < NARROW, u = {}, fl = gd._fullLayout, size = fl._size;
    var top = gd._bookTitleH, legendH = 0, plotTop = gd.querySelector(".draglayer .nsewdrag");
    plotTop = plotTop ? plotTop.getBoundingClientRect().top : 0;
    var annH = 0;   // annotations that sit in the top margin: the legend and menus go above them
    gd.querySelectorAll(".annotation").forEach(function (e) {
      var r = e.getBoundingClientRect(); if (r.height && r.top < plotTop - 1) { annH = Math.max(annH, plotTop - r.top); }
    });
    if (gd._bookAbove && legendShown(gd)) {
      legendH = height(".legend", gd) + 4;
      if (annH) { u["legend.y"] = 1 + (annH + 2) / size.h; legendH += annH + 2; }
    }
    var menusH = 0;
    if (o.menus.length && narrow) {      // phones: the menus go above the legend, left to right
      // rows of menus, left to right, wrapping at the figure's width (plotly keeps each menu's size in _dims)
      var rows = [[]], x = 4, fm = fl.updatemenus || [];
      o.menus.forEach(function (m, i) {
        var dm = (fm[i] && fm[i]._dims) || {};
        var d = { width: dm.totalWidth || dm.headerWidth || 140, height: dm.totalHeight || dm.headerHeight || 30 };
        if (x + d.width > width - 4 && rows[rows.length - 1].length) { rows.push([]); x = 4; }
        rows[rows.length - 1].push({ i: i, x: x, h: d.height });
        x += d.width + 8;
      });
      var below = legendH + 2;
      rows.reverse().forEach(function (row) {   // the last row sits just above the legend
        var h = Math.max.apply(null, row.map(function (c) { return c.h; }));
        row.forEach(function (c) {
          u["updatemenus[" + c.i + "].x"] = (c.x - size.l) / size.w;
          u["updatemenus[" + c.i + "].xanchor"] = "left";
          u["updatemenus[" + c.i + "].y"] = 1 + below / size.h;
          u["updatemenus[" + c.i + "].yanchor"] = "bottom";
        });
        below += h + 4;
      });
      menusH = below - legendH - 2 + 4;
      // the menus' label annotations ("dtype:") sat beside the menus; the button shows the value on a phone
      (gd.layout.annotations || []).forEach(function (a, i) {
        if (a.yref === "paper" && a.y >= 1 && /:\s*$/.test(a.text || "")) { u["annotations[" + i + "].visible"] = false; }
      });
    } else if (o.menus.length && gd._bookAbove && legendShown(gd)) {
      // wider screens with the legend moved above the plot: the menus (and their "dtype:" labels) go above the
      // legend, where they stay beside each other, instead of sitting on its first row
      var fm2 = fl.updatemenus || [], mh = 0;
      o.menus.forEach(function (m, i) {
        var dm = (fm2[i] && fm2[i]._dims) || {};
        mh = Math.max(mh, dm.headerHeight || dm.totalHeight || 30);
        u["updatemenus[" + i + "].y"] = 1 + (legendH + 2) / size.h;
        u["updatemenus[" + i + "].yanchor"] = "bottom";
      });
      (gd.layout.annotations || []).forEach(function (a, i) {
        if (a.yref === "paper" && a.y >= 1 && /:\s*$/.test(a.text || "")) {
          u["annotations[" + i + "].y"] = 1 + (legendH + 2 + mh / 2) / size.h;
          u["annotations[" + i + "].yanchor"] = "middle";
        }
      });
      menusH = mh + 4;
    }
    var t = top + legendH + menusH + 4 + (gd._bookAbove ? 0 : annH);
    if (narrow || t > (fl.margin.t || 0)) { u["margin.t"] = Math.max(t, narrow ? 0 : (o.margin.t || 0)); }
    if (o.sliders.length) {   // below the x tick labels and the x title
      var plotBottom = gd.querySelector(".draglayer .nsewdrag").getBoundingClientRect().bottom, low = plotBottom;
      gd.querySelectorAll(".xtick text, .xtitle, [class*='xtick'] text, [class*='xtitle']").forEach(function (e) {
        low = Math.max(low, e.getBoundingClientRect().bottom);
      });
      var padT = Math.ceil(low - plotBottom) + 6, sliderH = height(".slider-container", gd) || 60;
      o.sliders.forEach(function (s, i) { u["sliders[" + i + "].pad.t"] = padT; });
      u["margin.b"] = Math.max(fl.margin.b || 0, padT + sliderH + 8 - ((o.sliders[0].pad || {}).t || 0));
    }
    // the height grows by the margins' growth (the plot keeps its height), then until the lowest row has MIN_PLOT px
    var dT = (u["margin.t"] === undefined ? fl.margin.t : u["margin.t"]) - fl.margin.t;
    var dB = (u["margin.b"] === undefined ? fl.margin.b : u["margin.b"]) - fl.margin.b;
    var rows = Array.prototype.map.call(gd.querySelectorAll(".draglayer .nsewdrag"),
                                        function (r) { return r.getBoundingClientRect().height; });
    var smallest = rows.length ? Math.min.apply(null, rows) : size.h;
    var need = MIN_PLOT;   // and a y title never longer than its plot
    gd.querySelectorAll("[class*='ytitle']").forEach(function (e) { need = Math.max(need, e.getBoundingClientRect().height + 8); });
    var grow = smallest > 0 && smallest < need ? (need - smallest) * size.h / smallest : 0;
    u.height = Math.min(Math.ceil(fl.height + dT + dB + grow), Math.max(fl.height + dT + dB, 1600));
    return u;
  }

  function quad(el) {
    var b; try { b = el.getBBox(); } catch (e) { return null; }
    if (!b || b.width < 1 || b.height < 1) { return null; }
    var m = el.getScreenCTM(); if (!m) { return null; }
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]].map(function (p) {
      return [m.a * p[0] + m.c * p[1] + m.e, m.b * p[0] + m.d * p[1] + m.f];
    });
  }
  function hits(p, q) {   // the two (turned) boxes overlap by more than TOL px (separating axes)
    var least = Infinity;
    [p, q].forEach(function (poly) {
      for (var i = 0; i < 4; i++) {
        var a = poly[i], b = poly[(i + 1) % 4], nx = a[1] - b[1], ny = b[0] - a[0], n = Math.hypot(nx, ny);
        if (!n) { continue; }
        var pr = p.map(function (c) { return (c[0] * nx + c[1] * ny) / n; });
        var qr = q.map(function (c) { return (c[0] * nx + c[1] * ny) / n; });
        least = Math.min(least, Math.min(Math.max.apply(null, pr), Math.max.apply(null, qr)) -
                                Math.max(Math.min.apply(null, pr), Math.min.apply(null, qr)));
      }
    });
    return least > TOL;
  }
  function outside(q, box) {
    return q.some(function (c) { return c[0] < box.left - TOL || c[0] > box.right + TOL || c[1] < box.top - TOL || c[1] > box.bottom + TOL; });
  }

  /* pass 3: thin what still collides: tick labels per axis, point and bar labels, heatmap texts */
  function thirdPass(gd, o) {
    var u = {}, styles = [], fl = gd._fullLayout, box = gd.querySelector(".main-svg").getBoundingClientRect();
    axes(gd.layout).forEach(function (k) {
      var name = k.replace("axis", ""), labels = [];
      gd.querySelectorAll("g." + name + "tick > text").forEach(function (e) { var q = quad(e); if (q) { labels.push(q); } });
      var crowded = false;
      for (var i = 1; i < labels.length && !crowded; i++) { crowded = hits(labels[i - 1], labels[i]); }
      if (!crowded) { return; }
      var ax = fl[k] || {};
      if (ax.type === "log") { u[k + ".dtick"] = (o.axes[k] || {}).dtick === "D2" || gd._bookLogPass ? 1 : "D2"; }
      else if (ax.type !== "category") { u[k + ".nticks"] = Math.max(2, Math.floor(labels.length / 2)); }
    });
    var title = gd.querySelector(".gtitle"), plot = gd.querySelector(".draglayer .nsewdrag");
    if (title && plot) {   // what sits in the top margin (menus, legend, annotations) stays under the title
      var tb = title.getBoundingClientRect().bottom, pt = plot.getBoundingClientRect().top, high = Infinity;
      gd.querySelectorAll(".updatemenu-header-group, .updatemenu-button, .legend, .annotation").forEach(function (e) {
        var r = e.getBoundingClientRect(); if (r.height && r.bottom <= pt + 1) { high = Math.min(high, r.top); }
      });
      if (high < tb + 2) {
        u["margin.t"] = fl.margin.t + Math.ceil(tb + 4 - high);
        u.height = fl.height + Math.ceil(tb + 4 - high);
      }
    }
    var fixed = [];
    gd.querySelectorAll("svg text").forEach(function (e) {
      if (e.closest(".textpoint, .bartext, .hoverlayer") || !(e.textContent || "").trim()) { return; }
      var q = quad(e); if (q) { fixed.push(q); }
    });
    var kept = fixed.slice(), blank = {}, barsCrowded = {};
    gd.querySelectorAll(".textpoint text, text.bartext").forEach(function (e) {
      var tr = e.closest(".trace"), cd = tr && tr.__data__, idx = cd && cd[0] && cd[0].trace ? cd[0].trace.index : null;
      var pt = (e.closest(".textpoint") || e.closest(".point") || e).__data__;
      var q = quad(e); if (idx === null || !q) { return; }
      var bad = outside(q, box) || kept.some(function (k) { return hits(k, q); });
      if (!bad) { kept.push(q); return; }
      if (e.classList.contains("bartext")) { barsCrowded[idx] = true; return; }
      if (pt && pt.i !== undefined) { (blank[idx] = blank[idx] || []).push(pt.i); }
    });
    Object.keys(blank).forEach(function (idx) {
      var orig = o.texts[idx]; if (!Array.isArray(orig)) { return; }
      var t = orig.slice(); blank[idx].forEach(function (i) { t[i] = ""; });
      styles.push([{ text: [t] }, [Number(idx)]]);
    });
    Object.keys(barsCrowded).forEach(function (idx) { styles.push([{ textposition: "none" }, [Number(idx)]]); });
    gd.data.forEach(function (tr, idx) {   // heatmap texts: size with the cell, none when cells are tiny
      if (tr.type !== "heatmap" || !(tr.text || tr.texttemplate)) { return; }
      var cols = (tr.z && tr.z[0] && tr.z[0].length) || 1, cell = fl._size.w / cols;
      var sz = Math.min(((o.textfont[idx] || {}).size) || 12, Math.floor(cell / 3.2));
      styles.push(sz < 7 ? [{ texttemplate: "" }, [idx]] : [{ "textfont.size": sz }, [idx]]);
    });
    return { relayout: u, restyle: styles };
  }

  function restore(gd, o) {   // the stored texts, for a fresh pass at a new width
    var p = [];
    gd.data.forEach(function (tr, idx) {
      if (tr.text !== o.texts[idx] || tr.textposition !== o.textpos[idx] || tr.texttemplate !== o.texttemplate[idx] ||
          tr.name !== o.names[idx]) {
        p.push(window.Plotly.restyle(gd, { text: [o.texts[idx]], textposition: [o.textpos[idx]], name: [o.names[idx]],
                                           texttemplate: [o.texttemplate[idx]], textfont: [o.textfont[idx]] }, [idx]));
      }
    });
    return Promise.all(p);
  }

  /* before measuring: long legend names wrap on a phone; a colour bar's title sits on top of its tick labels */
  function prepare(gd, o, width) {
    var p = [], per = Math.max(16, Math.floor((width - 60) / 5.8));
    gd.data.forEach(function (tr, idx) {
      var r = {};
      if (width < NARROW && typeof o.names[idx] === "string" && o.names[idx].length > per) { r.name = [wrap(o.names[idx], per)]; }
      if (tr.colorbar && tr.colorbar.title && (tr.colorbar.title.text || typeof tr.colorbar.title === "string")) {
        r["colorbar.title.side"] = "top"; r["colorbar.len"] = 0.85; r["colorbar.y"] = 0; r["colorbar.yanchor"] = "bottom";
      }
      if (Object.keys(r).length) { p.push(window.Plotly.restyle(gd, r, [idx])); }
    });
    return Promise.all(p);
  }

  function apply(gd) {
    if (!window.Plotly || !gd.layout || !gd.clientWidth) { return Promise.resolve(); }
    var o = snapshot(gd), width = gd.clientWidth, key = Math.round(width / 20) + (isDark() ? "d" : "l");
    if (gd._bookSize === key) { return Promise.resolve(); }
    gd._bookSize = key;
    var P = window.Plotly;
    return restore(gd, o)
      .then(function () { return prepare(gd, o, width); })
      .then(function () { return P.relayout(gd, Object.assign(themed(gd, o), firstPass(gd, o, width))); })
      .then(function () { return P.relayout(gd, secondPass(gd, o, width)); })
      .then(function () {
        var t = thirdPass(gd, o);
        return Promise.all(t.restyle.map(function (r) { return P.restyle(gd, r[0], r[1]); }))
          .then(function () { return Object.keys(t.relayout).length ? P.relayout(gd, t.relayout) : null; })
          .then(function () {   // a log axis may need a second step (1-2-5 → decades)
            if (!Object.keys(t.relayout).length) { return null; }
            gd._bookLogPass = true;
            var t2 = thirdPass(gd, o);
            gd._bookLogPass = false;
            return Object.keys(t2.relayout).length ? P.relayout(gd, t2.relayout) : null;
          });
      })
      .then(function () { gd.setAttribute("data-book-layout", key); })
      .catch(function (e) { gd.setAttribute("data-book-layout", "error"); if (window.console) { console.warn("book-figures:", e); } });
  }

  function all() {
    var figs = document.querySelectorAll(".plotly-graph-div.js-plotly-plot");
    return Promise.all(Array.prototype.map.call(figs, function (gd) { return apply(gd); }));
  }

  function start() {
    window.bookFiguresReady = all();
    new MutationObserver(function () {
      document.querySelectorAll(".plotly-graph-div.js-plotly-plot").forEach(function (gd) { gd._bookSize = null; });
      window.bookFiguresReady = all();
    }).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    var t = null;
    window.addEventListener("resize", function () {
      clearTimeout(t); t = setTimeout(function () { window.bookFiguresReady = all(); }, 150);
    });
  }

  // Figures are drawn at DOMContentLoaded (see bookpages.py); start after them.
  if (document.readyState === "complete") { start(); } else { window.addEventListener("load", start); }
})();
