/* logscope interactive report: draws the JSON in #logscope-data with Plotly (inlined, no network).
 * Text from the log is only ever inserted with textContent or as Plotly hover text from
 * `customdata` (which Plotly escapes), never as HTML.
 */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("logscope-data").textContent);
  var MAP_LIMIT = 1500; // tensors drawn at once in an address map; zoom in to see all
  var COLORS = { occupied: "#3b78c2", high: "#e69a00", lower: "#2e7d32", span: "#c62828",
                 outside: "#9aa4b1", budget: "#c62828" };
  var PALETTE = ["#3b78c2", "#e69a00", "#2e7d32", "#8e44ad", "#c62828", "#16a085", "#7f8c8d", "#d35400"];
  var CONFIG = { displaylogo: false, responsive: true, scrollZoom: true,
                 modeBarButtonsToRemove: ["select2d", "lasso2d"] };

  function node(tag, props, children) {
    var e = document.createElement(tag);
    if (props) {
      Object.keys(props).forEach(function (k) {
        if (k === "text") { e.textContent = props[k]; }
        else if (k === "cls") { e.className = props[k]; }
        else { e.setAttribute(k, props[k]); }
      });
    }
    (children || []).forEach(function (c) {
      if (c !== null && c !== undefined) { e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); }
    });
    return e;
  }

  function bytes(n) {
    if (n === null || n === undefined) { return "—"; }
    var units = ["B", "KiB", "MiB", "GiB"], v = n, i = 0;
    while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
    return (i === 0 ? String(n) + " B" : v.toFixed(2) + " " + units[i] + " (" + n.toLocaleString("en") + " B)");
  }

  function hex(n) { return n === null || n === undefined ? "—" : "0x" + n.toString(16); }

  // The y axis in one binary unit chosen from the largest value, so ticks read 1.5, not 1.5e6.
  function scale(maxValue) {
    if (maxValue >= 1024 * 1024) { return { div: 1024 * 1024, unit: "MiB" }; }
    if (maxValue >= 1024) { return { div: 1024, unit: "KiB" }; }
    return { div: 1, unit: "B" };
  }

  function div(values, s) { return values.map(function (v) { return v === null ? null : v / s.div; }); }

  function maxOf(arrays) {
    var m = 0;
    arrays.forEach(function (a) { (a || []).forEach(function (v) { if (v !== null && v > m) { m = v; } }); });
    return m;
  }

  function xAxis(title, n) {
    var axis = { title: { text: title }, tickformat: "d", zeroline: false };
    if (n <= 25) { axis.dtick = 1; }
    return axis;
  }

  function liveNames(view, i) {
    var ids = view.curve.live[i], more = view.curve.live_count[i] - ids.length;
    return ids.map(function (j) { return view.tensors.name[j]; }).join(", ") + (more > 0 ? ", … " + more + " more" : "");
  }

  // ------------------------------------------------------------------------------ memory over ops
  function drawMemory(target, view) {
    var c = view.curve, s = scale(maxOf([c.occupied, c.high, c.lower, [view.span ? view.span.bytes : 0],
                                            [view.budget ? view.budget.bytes : 0]]));
    var hover = c.x.map(function (x, i) {
      var names = c.live ? liveNames(view, i) : "";
      var count = c.live_count ? c.live_count[i] + " live tensor(s)" : "";
      return [String(c.op[i] || ""), bytes(c.occupied[i]), c.line[i] === null ? "—" : "line " + c.line[i],
              count, names];
    });
    var traces = [{
      x: c.x, y: div(c.occupied, s), customdata: hover, name: view.kind === "mcu" ? "live heap" : "live feature memory",
      type: "scatter", mode: "lines", line: { shape: "hv", color: COLORS.occupied }, fill: "tozeroy",
      hovertemplate: (view.kind === "mcu" ? "step" : "layer") + " %{x} · %{customdata[0]}<br>live %{customdata[1]}<br>%{customdata[2]}" +
        "<br>%{customdata[3]}<br>%{customdata[4]}<extra></extra>"
    }];
    if (c.high) {
      traces.push({ x: c.x, y: div(c.high, s), name: "address high-water", type: "scatter", mode: "lines",
                    line: { shape: "hv", color: COLORS.high }, hoverinfo: "skip" });
    }
    if (c.lower && c.lower.some(function (v, i) { return v !== c.occupied[i]; })) {
      traces.push({ x: c.x, y: div(c.lower, s), name: "lower bound", type: "scatter", mode: "lines",
                    line: { shape: "hv", dash: "dot", color: COLORS.lower }, hoverinfo: "skip" });
    }
    var shapes = [], annotations = [];
    function level(value, color, label) {
      shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: value / s.div, y1: value / s.div,
                    line: { color: color, dash: "dash", width: 1.5 } });
      annotations.push({ xref: "paper", x: 0.01, xanchor: "left", y: value / s.div, yanchor: "bottom",
                         text: label, showarrow: false, font: { size: 11, color: color } });
    }
    if (view.span) { level(view.span.bytes, COLORS.span, view.span.label); }
    if (view.budget) {
      level(view.budget.bytes, COLORS.budget, "budget " + bytes(view.budget.bytes) +
            (view.budget.line ? " (line " + view.budget.line + ")" : " (" + view.budget.source + ")"));
    }
    var layout = {
      margin: { l: 70, r: 20, t: 10, b: 50 }, height: 360, hovermode: "x",
      xaxis: xAxis(view.x_label, c.x.length), yaxis: { title: { text: "bytes (" + s.unit + ")" }, rangemode: "tozero" },
      legend: { orientation: "h", x: 0, y: -0.22 }, shapes: shapes, annotations: annotations
    };
    window.Plotly.newPlot(target, traces, layout, CONFIG);
  }

  // ------------------------------------------------------------------------------- address map
  function mapIndexes(t, x0, x1) {
    var idx = [];
    for (var i = 0; i < t.name.length; i += 1) {
      if (t.rel_start[i] === null || t.size[i] === null) { continue; }
      if (x0 !== null && (t.last[i] + 0.5 < x0 || t.first[i] - 0.5 > x1)) { continue; }
      idx.push(i);
    }
    if (idx.length > MAP_LIMIT) {
      idx.sort(function (a, b) { return t.size[b] - t.size[a]; });
      return { idx: idx.slice(0, MAP_LIMIT), total: idx.length };
    }
    return { idx: idx, total: idx.length };
  }

  function mapTraces(view, sel, s) {
    var t = view.tensors, groups = [[true, "in the pool", COLORS.occupied], [false, "outside the pool", COLORS.outside]];
    return groups.map(function (g) {
      var ids = sel.idx.filter(function (i) { return t.inside[i] === g[0]; });
      return {
        type: "bar", name: g[1], marker: { color: g[2], opacity: 0.75, line: { width: 0.5, color: "#fff" } },
        x: ids.map(function (i) { return (t.first[i] + t.last[i]) / 2; }),
        width: ids.map(function (i) { return t.last[i] - t.first[i] + 0.8; }),
        base: ids.map(function (i) { return t.rel_start[i] / s.div; }),
        y: ids.map(function (i) { return t.size[i] / s.div; }),
        customdata: ids.map(function (i) {
          return [t.name[i] || "", "[" + hex(t.start[i]) + ", " + hex(t.end[i]) + ")", bytes(t.size[i]),
                  t.padding[i] === null ? "—" : bytes(t.padding[i]), t.line[i] === null ? "—" : "line " + t.line[i],
                  t.dtype[i] || "", t.first[i] + "–" + t.last[i], i];
        }),
        hovertemplate: "%{customdata[0]}<br>%{customdata[1]} · %{customdata[2]}<br>padding %{customdata[3]}" +
          "<br>%{customdata[5]} · live at ops %{customdata[6]}<br>%{customdata[4]}<extra></extra>"
      };
    }).filter(function (tr) { return tr.x.length > 0; });
  }

  function drawMap(target, note, view) {
    var t = view.tensors;
    var ends = t.rel_start.map(function (v, i) { return v === null || t.size[i] === null ? 0 : v + t.size[i]; });
    var s = scale(maxOf([ends]));
    var sel = mapIndexes(t, null, null);
    function setNote(sel2) {
      note.textContent = sel2.total > sel2.idx.length
        ? "Showing the " + sel2.idx.length.toLocaleString("en") + " largest of " + sel2.total.toLocaleString("en") +
          " tensors in view; zoom in to see every tensor."
        : sel2.total.toLocaleString("en") + " tensors in view.";
    }
    setNote(sel);
    var layout = {
      margin: { l: 70, r: 20, t: 10, b: 50 }, height: 380, barmode: "overlay", hovermode: "closest", bargap: 0,
      xaxis: xAxis(view.x_label, maxOf([t.last]) + 1), yaxis: { title: { text: "offset in pool (" + s.unit + ")" },
      rangemode: "tozero" }, legend: { orientation: "h", x: 0, y: -0.22 }
    };
    window.Plotly.newPlot(target, mapTraces(view, sel, s), layout, CONFIG);
    var busy = false;
    target.on("plotly_relayout", function (ev) {
      if (busy) { return; }
      // A drag zoom reports "xaxis.range[0]"/"[1]", Plotly.relayout and the buttons "xaxis.range".
      var range = ev["xaxis.range"] || [ev["xaxis.range[0]"], ev["xaxis.range[1]"]];
      var x0 = range[0], x1 = range[1];
      if (x0 === undefined && !ev["xaxis.autorange"]) { return; }
      var next = ev["xaxis.autorange"] ? mapIndexes(t, null, null) : mapIndexes(t, x0, x1);
      setNote(next);
      if (sel.total <= MAP_LIMIT && next.total <= MAP_LIMIT && sel.idx.length === t.name.length) { return; }
      sel = next;
      busy = true;
      window.Plotly.react(target, mapTraces(view, sel, s), target.layout, CONFIG).then(function () { busy = false; });
    });
    return s;
  }

  // ------------------------------------------------------------------------------ layer details
  function excerpt(log, lines) {
    var pre = node("pre", { cls: "excerpt" });
    var seen = {};
    lines.filter(function (n) { return n !== null && n !== undefined; }).sort(function (a, b) { return a - b; })
      .forEach(function (n) {
        if (seen[n]) { return; }
        seen[n] = true;
        var text = log.excerpts[String(n)];
        pre.appendChild(node("span", { cls: "ln", text: String(n).padStart(6, " ") + "  " }));
        pre.appendChild(document.createTextNode((text === undefined ? "(not kept)" : text) + "\n"));
      });
    return pre;
  }

  function kvTable(rows) {
    var table = node("table", { cls: "kv" });
    rows.forEach(function (r) {
      if (r[1] === null || r[1] === undefined || r[1] === "") { return; }
      table.appendChild(node("tr", null, [node("th", { text: r[0] }), node("td", { text: String(r[1]) })]));
    });
    return table;
  }

  function layerRow(view, layer) {
    var L = view.layers, row = {};
    if (!L || !L.id) { return row; }
    var k = L.id.indexOf(layer);
    if (k < 0) { return row; }
    Object.keys(L).forEach(function (col) { row[col] = L[col][k]; });
    return row;
  }

  function showLayer(panel, log, view, layer) {
    panel.textContent = "";
    var c = view.curve, i = c.x.indexOf(layer);
    var row = layerRow(view, layer);
    panel.appendChild(node("h4", { text: (view.kind === "mcu" ? "step " : "layer ") + layer + " · " +
      (row.op_type || (i >= 0 ? c.op[i] : "") || "") + (row.full_name ? " · " + row.full_name : "") }));
    var lines = [];
    var rows = [["live memory", i >= 0 ? bytes(c.occupied[i]) : null]];
    if (c.lower && i >= 0) { rows.push(["lower bound", bytes(c.lower[i])]); }
    if (c.high && i >= 0) { rows.push(["address high-water", bytes(c.high[i])]); }
    if (i >= 0 && c.line[i] !== null) { rows.push(["row in the log", "line " + c.line[i]]); lines.push(c.line[i]); }
    ["target", "dtype", "output_shape"].forEach(function (k) { rows.push([k.replace("_", " "), row[k]]); });
    if (row.time_us !== null && row.time_us !== undefined) { rows.push(["time (build table)", row.time_us + " µs"]); }
    if (row.rw_kb !== null && row.rw_kb !== undefined) { rows.push(["read/write", row.rw_kb + " KB"]); }
    if (row.perf_line !== null && row.perf_line !== undefined) {
      rows.push(["time (eval_perf)", row.perf_time_us === null ? null : row.perf_time_us + " µs"]);
      rows.push(["read/write (eval_perf)", row.perf_rw_kb === null ? null : row.perf_rw_kb + " KB"]);
      rows.push(["MAC usage", row.perf_mac_usage]);
      rows.push(["perf row", "line " + row.perf_line]);
      lines.push(row.perf_line);
    }
    panel.appendChild(kvTable(rows));
    if (view.tensors && c.live && i >= 0) {
      var t = view.tensors, ids = c.live[i];
      var more = c.live_count[i] - ids.length;
      panel.appendChild(node("div", { cls: "note", text: c.live_count[i] + " tensor(s) live here" +
        (more > 0 ? " (the first " + ids.length + " listed)" : "") }));
      var table = node("table", { cls: "data live-tensors" }, [node("tr", null, ["tensor", "dtype", "[start, end)", "size",
        "padding", "ops", "line"].map(function (h) { return node("th", { text: h }); }))]);
      ids.forEach(function (j) {
        table.appendChild(node("tr", null, [t.name[j], t.dtype[j] || "", "[" + hex(t.start[j]) + ", " + hex(t.end[j]) + ")",
          bytes(t.size[j]), t.padding[j] === null ? "—" : bytes(t.padding[j]), t.first[j] + "–" + t.last[j],
          t.line[j] === null ? "—" : String(t.line[j])].map(function (v) { return node("td", { text: v }); })));
      });
      panel.appendChild(table);
    }
    if (lines.length) {
      panel.appendChild(node("div", { cls: "note", text: "From the log:" }));
      panel.appendChild(excerpt(log, lines));
    }
  }

  // --------------------------------------------------------------------------------- one view
  function drawView(box, log, view) {
    box.textContent = "";
    var mem = node("div", { cls: "chart memory-chart" });
    var panel = node("div", { cls: "layer-panel", text: "Click a point of the curve or a tensor of the map to see " +
      "that layer: its tensors, its perf row and the log lines they come from." });
    box.appendChild(node("h4", { text: "Memory over " + (view.kind === "mcu" ? "steps" : "layers") }));
    box.appendChild(mem);
    drawMemory(mem, view);
    mem.on("plotly_click", function (ev) { if (ev.points.length) { showLayer(panel, log, view, ev.points[0].x); } });
    if (view.tensors && view.tensors.name.length) {
      var map = node("div", { cls: "chart address-map" }), note = node("div", { cls: "note map-note" });
      box.appendChild(node("h4", { text: "Address map" }));
      box.appendChild(note);
      box.appendChild(map);
      drawMap(map, note, view);
      map.on("plotly_click", function (ev) {
        if (!ev.points.length) { return; }
        var j = ev.points[0].customdata[7];
        showLayer(panel, log, view, view.tensors.first[j]);
      });
    }
    box.appendChild(panel);
  }

  // ------------------------------------------------------------------------------- findings
  function findingsExplorer(box, log) {
    var all = log.findings;
    if (!all.length) { box.appendChild(node("p", { cls: "note", text: "No findings." })); return; }
    function options(values, label) {
      var sel = node("select", { "aria-label": label }, [node("option", { value: "", text: "every " + label })]);
      values.forEach(function (v) { sel.appendChild(node("option", { value: v, text: v })); });
      return sel;
    }
    function uniq(values) { return values.filter(function (v, i) { return values.indexOf(v) === i; }); }
    var sev = options(["error", "warning", "info"].filter(function (s) {
      return all.some(function (f) { return f.severity === s; });
    }), "severity");
    var rule = options(uniq(all.map(function (f) { return f.code; })).sort(), "rule");
    var build = options(uniq(all.map(function (f) { return f.build === null ? "—" : String(f.build); })), "build");
    sev.className = "f-severity"; rule.className = "f-rule"; build.className = "f-build";
    var count = node("span", { cls: "note f-count" });
    var list = node("div", { cls: "groups" });
    box.appendChild(node("div", { cls: "filters" }, ["Severity ", sev, " Rule ", rule, " Build ", build, " ", count]));
    box.appendChild(list);
    function render() {
      list.textContent = "";
      var shown = all.filter(function (f) {
        return (!sev.value || f.severity === sev.value) && (!rule.value || f.code === rule.value) &&
          (!build.value || (f.build === null ? "—" : String(f.build)) === build.value);
      });
      var groups = {}, order = [];
      shown.forEach(function (f) {
        var key = f.code + "|" + f.build;
        if (!groups[key]) { groups[key] = []; order.push(key); }
        groups[key].push(f);
      });
      count.textContent = "showing " + shown.length + " of " + all.length + " findings in " + order.length + " group(s)";
      order.forEach(function (key) {
        var fs = groups[key], f0 = fs[0];
        var worst = ["error", "warning", "info"].filter(function (s) { return fs.some(function (f) { return f.severity === s; }); })[0];
        var details = node("details", { cls: "group level-" + worst, "data-rule": f0.code });
        if (fs.length <= 3) { details.setAttribute("open", ""); }
        details.appendChild(node("summary", null, [node("code", { text: f0.code }), " " + f0.name + " · build " +
          (f0.build === null ? "—" : f0.build) + " · " + fs.length + " finding" + (fs.length > 1 ? "s" : "") + " (" + worst + ")"]));
        if (f0.hint) { details.appendChild(node("div", { cls: "hint", text: "Hint: " + f0.hint })); }
        fs.forEach(function (f) {
          var item = node("div", { cls: "finding level-" + f.severity }, [
            node("div", { cls: "head", text: f.severity + " · " + (f.lines.length ? "line " + f.lines.slice(0, 8).join(", ") +
              (f.lines.length > 8 ? ", …" : "") : "file") + (f.subject ? " · " + f.subject : "") }),
            node("div", { cls: "msg", text: f.message })]);
          if (f.evidence.length) { item.appendChild(kvTable(f.evidence)); }
          if (f.hint && f.hint !== f0.hint) { item.appendChild(node("div", { cls: "hint", text: "Hint: " + f.hint })); }
          details.appendChild(item);
        });
        list.appendChild(details);
      });
    }
    [sev, rule, build].forEach(function (s) { s.addEventListener("change", render); });
    render();
  }

  // ------------------------------------------------------------------------------- comparison
  function drawCompare(target) {
    var traces = [], all = [];
    DATA.logs.forEach(function (log) {
      log.views.forEach(function (view) { all.push(view.curve.occupied); });
    });
    var s = scale(maxOf(all)), k = 0;
    DATA.logs.forEach(function (log) {
      log.views.forEach(function (view) {
        traces.push({ x: view.curve.x, y: div(view.curve.occupied, s), type: "scatter", mode: "lines",
          name: log.name + " · " + view.label, line: { shape: "hv", color: PALETTE[k % PALETTE.length], width: 1.6 },
          customdata: view.curve.x.map(function (x, i) { return [bytes(view.curve.occupied[i]), String(view.curve.op[i] || "")]; }),
          hovertemplate: "%{fullData.name}<br>step %{x} · %{customdata[1]}<br>%{customdata[0]}<extra></extra>" });
        k += 1;
      });
    });
    window.Plotly.newPlot(target, traces, { margin: { l: 70, r: 20, t: 10, b: 50 }, height: 380, hovermode: "closest",
      xaxis: xAxis("layer / step", maxOf(traces.map(function (t) { return t.x; }))),
      yaxis: { title: { text: "live memory (" + s.unit + ")" }, rangemode: "tozero" },
      legend: { orientation: "h", x: 0, y: -0.22 } }, CONFIG);
  }

  // ------------------------------------------------------------------------------------- start
  DATA.logs.forEach(function (log) {
    var section = document.getElementById("log-" + (log.index + 1));
    if (!section) { return; }
    var explore = section.querySelector(".explore");
    if (explore && log.views.length) {
      var box = node("div", { cls: "view" });
      if (log.views.length > 1) {
        var pick = node("select", { cls: "view-select", "aria-label": "build" });
        log.views.forEach(function (v, i) { pick.appendChild(node("option", { value: String(i), text: v.label })); });
        pick.value = String(log.views.length - 1);
        pick.addEventListener("change", function () { drawView(box, log, log.views[Number(pick.value)]); });
        explore.appendChild(node("div", { cls: "filters" }, [String(log.views.length) + " builds/runs with memory data: ", pick]));
      }
      explore.appendChild(box);
      drawView(box, log, log.views[log.views.length - 1]);
    } else if (explore) {
      explore.appendChild(node("p", { cls: "note", text: "This log has no per-layer memory data to draw." }));
    }
    var fbox = section.querySelector(".findings-explorer");
    if (fbox) { findingsExplorer(fbox, log); }
  });
  var compare = document.getElementById("compare-chart");
  if (compare) { drawCompare(compare); }
  document.body.setAttribute("data-ready", "true");
})();
