// strata's HTML report: builds the page from the JSON block #strata-data.
// Every string from the trace goes into the page through textContent or a
// canvas' fillText, never as markup. No network, no framework: the file's
// Content-Security-Policy forbids both (src/html/page.h).
"use strict";
(function () {
  var data = JSON.parse(document.getElementById("strata-data").textContent);
  var api = (window.strataReport = { ready: false });

  // ---- small DOM helpers (text only) ----------------------------------
  // Control bytes in names (a terminal escape, a bell) shown as \xNN, as
  // strata's text output shows them; line feeds stay (multi-line notes).
  function visible(text) {
    return String(text).replace(/[\x00-\x09\x0b-\x1f\x7f]/g, function (c) {
      return "\\x" + (c.charCodeAt(0) < 16 ? "0" : "") + c.charCodeAt(0).toString(16);
    });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = visible(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function section(id, title) {
    var s = el("section");
    s.id = id;
    add(s, el("h2", null, title));
    add(main, s);
    nav.appendChild(link(id, title));
    return s;
  }
  function link(id, text) {
    var a = el("a", null, text);
    a.href = "#" + id;
    return a;
  }
  function fmtNs(ns) {
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + " \u00b5s";
    return Math.round(ns) + " ns";
  }
  // A tick label precise enough that neighbours differ: the unit of the
  // time itself, the decimals of the step between ticks.
  function fmtTick(t, step) {
    var a = Math.max(Math.abs(t), step), unit = 1, name = "ns";
    if (a >= 1e9) { unit = 1e9; name = "s"; } else if (a >= 1e6) { unit = 1e6; name = "ms"; }
    else if (a >= 1e3) { unit = 1e3; name = "\u00b5s"; }
    var decimals = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / unit) - 1e-9)));
    return (t / unit).toFixed(decimals) + " " + name;
  }
  function num(n) { return Number(n).toLocaleString("en-US"); }
  function hashHue(s) {
    var h = 2166136261;
    for (var i = 0; i < s.length && i < 64; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) % 360;
  }
  var tip = el("div", "tip");
  function showTip(ev, text) {
    tip.textContent = visible(text);
    tip.style.display = "block";
    var x = ev.clientX + 14, y = ev.clientY + 14;
    if (x + 360 > window.innerWidth) x = Math.max(4, ev.clientX - 380);
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  // ---- page frame ------------------------------------------------------
  document.title = "strata \u2014 " + data.title;
  var header = el("header", "top");
  var nav = el("nav");
  add(header, el("h1", null, data.title), nav, el("span", "gen", data.generator));
  var main = el("main");
  add(document.body, header, main, tip);

  // ---- summary and diagnosis ------------------------------------------
  var sum = section("summary", "Run summary");
  var cards = add(sum, el("div", "cards")).lastChild;
  data.summary.forEach(function (kv) {
    add(cards, add(el("div", "card"), el("div", "k", kv[0]), el("div", "v", kv[1])));
  });
  if (data.notes && data.notes.length) {
    var ul = add(sum, el("ul", "lines")).lastChild;
    data.notes.forEach(function (n) { add(ul, el("li", null, n)); });
  }

  if (data.diagnosis) {
    var dg = section("diagnosis", "Diagnosis");
    var d = data.diagnosis;
    if (d.skipped) add(dg, el("p", "muted", d.skipped));
    if (d.header.length) {
      var hl = add(dg, el("ul", "lines")).lastChild;
      d.header.forEach(function (h) { if (h.trim()) add(hl, el("li", null, h)); });
    }
    // Columns by role, whatever the diagnosis names them (report/diagnosis_report.h).
    var cols = d.columns.map(function (c) { return c.name; });
    var find = function (re) { for (var i = 0; i < cols.length; i++) if (re.test(cols[i])) return i; return -1; };
    var causeCol = find(/^(Finding|Cause)$/), gainCol = find(/save|Gain/i), rankCol = find(/^#$/);
    var cell = function (row, i) { var c = row[i]; return i < 0 ? "" : Array.isArray(c) ? c : [c, null]; };
    // A diagnose trace's verdict line says what explains the time even without a finding.
    var verdictLine = d.header.some(function (h) { return /^Verdict: /.test(h); });
    if (!d.rows.length && !d.skipped && !verdictLine) add(dg, el("p", "none", "No finding: nothing on the timeline accounts for a large share of the work window."));
    d.rows.forEach(function (row) {
      var f = el("div", "finding");
      var gain = cell(row, gainCol);
      var gainText = gain[1] !== null && gain[1] !== undefined && /ns\)/.test(cols[gainCol]) ? "could save " + fmtNs(gain[1]) : gain[0];
      add(f, el("span", "gain", gainText), el("div", "cause", cell(row, causeCol)[0]));
      var dl = el("dl");
      cols.forEach(function (name, i) {
        if (i === causeCol || i === gainCol || i === rankCol) return;
        var text = cell(row, i)[0];
        if (text === "" || text === undefined) return;
        if (name === "Evidence") text = String(text).split("; ").join("\n");
        add(dl, el("dt", null, name), el("dd", null, text));
      });
      add(dg, add(f, dl));
    });
    // The text report's notes repeat each finding ("#1 ...", indented lines);
    // the rest (what could not be judged) stays.
    d.notes = d.notes.filter(function (n) { return !/^(#\d|\s)/.test(n); });
    if (d.notes.length) d.notes.forEach(function (n) { add(dg, el("p", "note", n)); });
  }

  // ---- tables -----------------------------------------------------------
  var ROW_LIMIT = 1000;
  function dataTable(t) {
    var box = el("div");
    if (t.header.length) {
      var hl = add(box, el("ul", "lines")).lastChild;
      t.header.forEach(function (h) { if (h.trim()) add(hl, el("li", null, h)); });
    }
    if (t.skipped) { add(box, el("p", "muted", t.skipped)); return box; }
    var bar = add(box, el("div", "toolbar")).lastChild;
    var filter = el("input");
    filter.type = "search";
    filter.placeholder = "Filter rows (any column)";
    filter.className = "filter";
    var count = el("span", "count");
    add(bar, filter, count);
    var wrap = add(box, el("div", "tablewrap")).lastChild;
    var table = add(wrap, el("table", "data")).lastChild;
    var thead = add(table, el("thead")).lastChild;
    var tr = add(thead, el("tr")).lastChild;
    var sortCol = -1, sortDir = 1;
    var ths = t.columns.map(function (c, i) {
      var th = el("th", c.right ? "r" : "", c.name);
      th.addEventListener("click", function () {
        if (sortCol === i) sortDir = -sortDir;
        else { sortCol = i; sortDir = c.right ? -1 : 1; }
        ths.forEach(function (h, j) {
          h.classList.toggle("asc", j === sortCol && sortDir > 0);
          h.classList.toggle("desc", j === sortCol && sortDir < 0);
        });
        draw();
      });
      return add(tr, th).lastChild;
    });
    var tbody = add(table, el("tbody")).lastChild;
    var rows = t.rows.map(function (r, i) {
      var texts = r.map(function (c) { return Array.isArray(c) ? c[0] : c; });
      texts = texts.map(visible);
      return { cells: r, texts: texts, lower: texts.join("\u0001").toLowerCase(), order: i };
    });
    function key(r, i) { var c = r.cells[i]; return Array.isArray(c) ? c[1] : c; }
    function draw() {
      var q = filter.value.toLowerCase();
      var shown = q ? rows.filter(function (r) { return r.lower.indexOf(q) >= 0; }) : rows.slice();
      if (sortCol >= 0) {
        shown.sort(function (a, b) {
          var x = key(a, sortCol), y = key(b, sortCol);
          if (typeof x === "number" && typeof y === "number") return (x - y) * sortDir || a.order - b.order;
          return String(x).localeCompare(String(y)) * sortDir || a.order - b.order;
        });
      }
      tbody.textContent = "";
      var frag = document.createDocumentFragment();
      shown.slice(0, ROW_LIMIT).forEach(function (r) {
        var row = el("tr");
        r.texts.forEach(function (text, i) {
          var cls = t.columns[i].right ? "r" : "name";
          if (text.length > 300) {
            // A very long name scrolls inside its cell instead of stretching the table.
            add(row, add(el("td", cls), el("div", "long", text)));
          } else {
            add(row, el("td", cls, text));
          }
        });
        frag.appendChild(row);
      });
      tbody.appendChild(frag);
      count.textContent = shown.length + " of " + rows.length + " rows" +
        (shown.length > ROW_LIMIT ? " (first " + ROW_LIMIT + " shown; narrow the filter)" : "");
    }
    filter.addEventListener("input", draw);
    draw();
    t.notes.forEach(function (n) { add(box, el("p", "note", n)); });
    return box;
  }
  if (data.tables.length) {
    var ts = section("tables", "Tables");
    var tabs = add(ts, el("div", "tabs")).lastChild;
    var panes = [];
    data.tables.forEach(function (t, i) {
      var b = el("button", i ? "" : "on", t.label);
      b.dataset.report = t.id;
      b.title = t.title;
      var pane = dataTable(t);
      pane.dataset.report = t.id;
      pane.className = "pane";
      if (i) pane.style.display = "none";
      b.addEventListener("click", function () {
        panes.forEach(function (p, j) { p.style.display = j === i ? "" : "none"; });
        tabs.querySelectorAll("button").forEach(function (x, j) { x.classList.toggle("on", j === i); });
      });
      add(tabs, b);
      panes.push(add(ts, pane).lastChild);
    });
  }

  // ---- timeline ---------------------------------------------------------
  if (data.timeline && data.timeline.tracks.length) timeline(section("timeline", "Timeline"), data.timeline);

  function timeline(sec, T) {
    var LABEL = 230, ROW = 16, GROUP = 18, AXIS = 24;
    var RAW_DRAW_LIMIT = 40000;  // timeline_lod.cc: kRawDrawLimit
    var names = T.names.map(visible), span = T.span;
    // Decode tracks: absolute starts (relative to t0), ends, running max of
    // ends (for the first visible event), levels' absolute bin indices.
    var y = AXIS, lastGroup = null;
    var tracks = T.tracks.map(function (t) {
      var tr = { t: t, groupY: -1 };
      if (t.group !== lastGroup) { tr.groupY = y; y += GROUP; lastGroup = t.group; }
      tr.y = y;
      tr.rows = t.raw ? t.depth : 1;
      tr.h = tr.rows * ROW;
      y += tr.h + 4;
      if (t.raw) {
        var e = t.events, n = e.s.length;
        var s = new Float64Array(n), en = new Float64Array(n), mx = new Float64Array(n);
        var acc = 0, m = -Infinity;
        for (var i = 0; i < n; i++) {
          acc += e.s[i]; s[i] = acc; en[i] = acc + e.d[i];
          m = Math.max(m, en[i]); mx[i] = m;
        }
        tr.s = s; tr.e = en; tr.mx = mx; tr.n = e.n; tr.k = e.k;
      }
      tr.levels = t.levels.map(function (l) {
        var idx = new Float64Array(l.i.length), a = 0;
        for (var i = 0; i < l.i.length; i++) { a += l.i[i]; idx[i] = a; }
        return { w: l.w, idx: idx, c: l.c, b: l.b, n: l.n };
      });
      return tr;
    });
    var height = y + 6;
    var bar = add(sec, el("div", "toolbar")).lastChild;
    var reset = el("button", null, "Reset zoom");
    var zin = el("button", null, "Zoom in"), zout = el("button", null, "Zoom out");
    var info = el("span", "count");
    add(bar, reset, zin, zout, info);
    add(sec, el("p", "note", "Wheel or the buttons zoom around the pointer, drag pans; " +
      (T.kept < T.events ? num(T.kept) + " of " + num(T.events) + " events are kept one by one here; busy tracks are drawn as bins " +
        "(events, share busy, longest name). The full trace stays in the SQLite file (strata export --format chrome opens it in Perfetto)."
        : "every event is kept; arrows join launches to their kernels and copies when few are on screen.")));
    var vp = add(sec, el("div", "viewport tlscroll")).lastChild;
    var canvas = add(vp, el("canvas")).lastChild;
    var ctx = canvas.getContext("2d");
    var v0 = 0, v1 = span, width = 0, dpr = window.devicePixelRatio || 1;
    function resize() {
      width = vp.clientWidth;
      canvas.width = width * dpr; canvas.height = height * dpr;
      canvas.style.width = width + "px"; canvas.style.height = height + "px";
      schedule();
    }
    var pending = false;
    function schedule() {
      if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; draw(); }); }
    }
    function xOf(t) { return LABEL + (t - v0) / (v1 - v0) * (width - LABEL); }
    function colour(tr, nameIdx, kind) {
      if (kind === 1) return "#e0902f";
      if (kind === 2) return "#9a7b4f";
      var h = hashHue(names[nameIdx] || "");
      switch (tr.t.kind) {
        case "api": return "hsl(" + (200 + h % 40) + ",35%,62%)";
        case "nvtx": return "hsl(" + (90 + h % 70) + ",45%,55%)";
        case "op": return "hsl(" + (260 + h % 50) + ",40%,64%)";
        default: return "hsl(" + h + ",58%,63%)";
      }
    }
    function lowerBound(arr, x) {
      var lo = 0, hi = arr.length;
      while (lo < hi) { var m = (lo + hi) >> 1; if (arr[m] < x) lo = m + 1; else hi = m; }
      return lo;
    }
    function pickLevel(tr) {
      var nsPerPx = (v1 - v0) / Math.max(1, width - LABEL);
      var best = null;
      for (var i = 0; i < tr.levels.length; i++) {
        if (tr.levels[i].w >= nsPerPx * 0.75 || !best) best = tr.levels[i];
      }
      return best;
    }
    function rawVisible(tr) {
      var a = lowerBound(tr.mx, v0), b = lowerBound(tr.s, v1);
      return [a, b];
    }
    var arrowsDrawn = 0;
    function draw() {
      var W = width;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, W, height);
      ctx.font = "11px system-ui, sans-serif";
      ctx.textBaseline = "middle";
      // axis
      var range = v1 - v0, step = Math.pow(10, Math.floor(Math.log10(range / 8)));
      if (range / step > 16) step *= 5; else if (range / step > 8) step *= 2;
      ctx.fillStyle = "#5d6778";
      ctx.strokeStyle = "#eef0f3";
      for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
        var x = xOf(t);
        ctx.beginPath(); ctx.moveTo(x + 0.5, AXIS - 6); ctx.lineTo(x + 0.5, height); ctx.stroke();
        ctx.fillText(fmtTick(t, step), x + 3, AXIS / 2);
      }
      tracks.forEach(function (tr) {
        if (tr.groupY >= 0) {
          ctx.fillStyle = "#eef1f5";
          ctx.fillRect(0, tr.groupY + 2, W, GROUP - 3);
          ctx.fillStyle = "#1d2430";
          ctx.font = "600 11px system-ui, sans-serif";
          ctx.fillText(clip(tr.t.group, W - 12), 6, tr.groupY + GROUP / 2 + 1);
          ctx.font = "11px system-ui, sans-serif";
        }
        ctx.fillStyle = "#5d6778";
        ctx.fillText(clip(tr.t.name + "  (" + num(tr.t.count) + ")", LABEL - 14), 12, tr.y + ROW / 2);
        ctx.save();
        ctx.beginPath(); ctx.rect(LABEL, tr.y, W - LABEL, tr.h); ctx.clip();
        var useRaw = tr.t.raw;
        if (useRaw && tr.levels.length) {
          var vis = rawVisible(tr);
          if (vis[1] - vis[0] > RAW_DRAW_LIMIT) useRaw = false;
        }
        if (useRaw) drawRaw(tr); else drawBins(tr);
        ctx.restore();
      });
      drawArrows();
      ctx.fillStyle = "#dde1e7";
      ctx.fillRect(LABEL - 1, AXIS, 1, height - AXIS);
      info.textContent = "view " + fmtNs(v0) + " \u2013 " + fmtNs(v1) + " (" + fmtNs(v1 - v0) + " wide)";
      if (!api.firstPaintMs) api.firstPaintMs = performance.now();
    }
    function clip(text, px) {
      if (ctx.measureText(text).width <= px) return text;
      var lo = 0, hi = Math.min(text.length, 400);
      while (lo < hi) {
        var m = (lo + hi + 1) >> 1;
        if (ctx.measureText(text.slice(0, m) + "\u2026").width <= px) lo = m; else hi = m - 1;
      }
      return lo ? text.slice(0, lo) + "\u2026" : "";
    }
    function drawRaw(tr) {
      var vis = rawVisible(tr), lastX = [];
      for (var i = vis[0]; i < vis[1]; i++) {
        if (tr.e[i] < v0) continue;
        var depth = tr.k[i] >> 2, kind = tr.k[i] & 3;
        var x0 = Math.max(LABEL, xOf(tr.s[i])), x1 = Math.min(width, xOf(tr.e[i]));
        var w = Math.max(1, x1 - x0);
        if (w < 1.5 && lastX[depth] !== undefined && Math.floor(x0) <= lastX[depth]) continue;
        lastX[depth] = Math.floor(x0 + w);
        var yy = tr.y + depth * ROW;
        ctx.fillStyle = colour(tr, tr.n[i], kind);
        ctx.fillRect(x0, yy + 1, w, ROW - 2);
        if (w > 36) {
          ctx.fillStyle = "#10151d";
          ctx.fillText(clip(names[tr.n[i]], w - 6), x0 + 3, yy + ROW / 2);
        }
      }
    }
    function drawBins(tr) {
      var l = pickLevel(tr);
      if (!l) return;
      var a = lowerBound(l.idx, Math.floor(v0 / l.w) - 1), b = lowerBound(l.idx, Math.ceil(v1 / l.w) + 1);
      for (var i = a; i < b; i++) {
        var bs = l.idx[i] * l.w;
        var x0 = Math.max(LABEL, xOf(bs)), x1 = Math.min(width, xOf(bs + l.w));
        var busy = l.b[i] / 1000;
        var hgt = Math.max(2, (ROW - 2) * Math.min(1, busy));
        ctx.fillStyle = colour(tr, l.n[i], 0);
        ctx.fillRect(x0, tr.y + ROW - 1 - hgt, Math.max(1, x1 - x0), hgt);
      }
    }
    function drawArrows() {
      arrowsDrawn = 0;
      var A = T.arrows, cand = [];
      for (var i = 0; i < A.length; i += 4) {
        var ta = tracks[A[i]], tb = tracks[A[i + 2]];
        var xa = ta.s[A[i + 1]], xb = tb.s[A[i + 3]];
        if ((xa < v0 && xb < v0) || (xa > v1 && xb > v1)) continue;
        cand.push(i);
        if (cand.length > 60) return;
      }
      ctx.save();
      ctx.beginPath(); ctx.rect(LABEL, AXIS, width - LABEL, height - AXIS); ctx.clip();
      ctx.strokeStyle = "rgba(40,40,60,.55)";
      ctx.fillStyle = "rgba(40,40,60,.7)";
      cand.forEach(function (i) {
        var ta = tracks[A[i]], tb = tracks[A[i + 2]];
        var ia = A[i + 1], ib = A[i + 3];
        var x0 = xOf(ta.s[ia]), y0 = ta.y + ((ta.k[ia] >> 2) + 1) * ROW - 1;
        var x1 = xOf(tb.s[ib]), y1 = tb.y + 1;
        ctx.beginPath(); ctx.moveTo(x0, y0);
        ctx.bezierCurveTo(x0, (y0 + y1) / 2, x1, (y0 + y1) / 2, x1, y1); ctx.stroke();
        ctx.beginPath(); ctx.moveTo(x1, y1); ctx.lineTo(x1 - 3, y1 - 5); ctx.lineTo(x1 + 3, y1 - 5); ctx.fill();
        arrowsDrawn++;
      });
      ctx.restore();
    }
    function zoom(factor, px) {
      var f = Math.min(1, Math.max(0, (px - LABEL) / (width - LABEL)));
      var at = v0 + f * (v1 - v0);
      var w = Math.min(span, Math.max(50, (v1 - v0) * factor));
      v0 = at - f * w; v1 = v0 + w;
      clampView(); schedule();
    }
    function clampView() {
      var w = v1 - v0;
      if (v0 < 0) { v0 = 0; v1 = w; }
      if (v1 > span) { v1 = span; v0 = Math.max(0, span - w); }
    }
    canvas.addEventListener("wheel", function (ev) {
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        var d = (ev.shiftKey ? ev.deltaY : ev.deltaX) / (width - LABEL) * (v1 - v0);
        v0 += d; v1 += d; clampView(); schedule();
      } else {
        zoom(Math.pow(1.0025, ev.deltaY), ev.offsetX);
      }
      ev.preventDefault();
    }, { passive: false });
    var dragging = null;
    canvas.addEventListener("mousedown", function (ev) { dragging = { x: ev.clientX, v0: v0, v1: v1 }; });
    window.addEventListener("mouseup", function () { dragging = null; });
    window.addEventListener("mousemove", function (ev) {
      if (!dragging) return;
      var d = (dragging.x - ev.clientX) / (width - LABEL) * (dragging.v1 - dragging.v0);
      v0 = dragging.v0 + d; v1 = dragging.v1 + d; clampView(); schedule();
    });
    canvas.addEventListener("mousemove", function (ev) {
      if (dragging) { hideTip(); return; }
      var text = hit(ev.offsetX, ev.offsetY);
      if (text) showTip(ev, text); else hideTip();
    });
    canvas.addEventListener("mouseleave", hideTip);
    function hit(px, py) {
      if (px < LABEL) return null;
      var t = v0 + (px - LABEL) / (width - LABEL) * (v1 - v0);
      var slop = 2 * (v1 - v0) / (width - LABEL);
      for (var j = 0; j < tracks.length; j++) {
        var tr = tracks[j];
        if (py < tr.y || py >= tr.y + tr.h) continue;
        var useRaw = tr.t.raw && !(tr.levels.length && rawVisible(tr)[1] - rawVisible(tr)[0] > RAW_DRAW_LIMIT);
        if (useRaw) {
          var depth = Math.floor((py - tr.y) / ROW);
          var i = lowerBound(tr.s, t + slop);
          for (var k = i - 1; k >= 0 && k >= i - 5000; k--) {
            if ((tr.k[k] >> 2) === depth && tr.e[k] + slop >= t) {
              return names[tr.n[k]] + "\nstart " + fmtNs(tr.s[k]) + ", duration " + fmtNs(tr.e[k] - tr.s[k]);
            }
          }
          return null;
        }
        var l = pickLevel(tr);
        if (!l) return null;
        var b = Math.floor(t / l.w), at = lowerBound(l.idx, b);
        if (at < l.idx.length && l.idx[at] === b) {
          return l.c[at] + " events in " + fmtNs(b * l.w) + " \u2013 " + fmtNs((b + 1) * l.w) +
            ", " + (l.b[at] / 10).toFixed(1) + "% busy\nlongest: " + names[l.n[at]];
        }
        return null;
      }
      return null;
    }
    reset.addEventListener("click", function () { v0 = 0; v1 = span; schedule(); });
    zin.addEventListener("click", function () { zoom(0.5, LABEL + (width - LABEL) / 2); });
    zout.addEventListener("click", function () { zoom(2, LABEL + (width - LABEL) / 2); });
    window.addEventListener("resize", resize);
    api.timeline = {
      view: function () { return [v0, v1]; },
      setView: function (a, b) { v0 = a; v1 = b; clampView(); draw(); },
      arrowsDrawn: function () { return arrowsDrawn; },
      tracks: tracks.length,
    };
    resize();
    draw();
  }

  // ---- flame graph ------------------------------------------------------
  if (data.flame && (data.flame.python || data.flame.mixed)) flame(section("flame", "Flame graph (CPU)"), data.flame);

  function flame(sec, F) {
    var ROW = 18;
    var views = [];
    if (F.python) views.push(["python", "Python only", F.python]);
    if (F.mixed) views.push(["mixed", F.python ? "Mixed (native frames too)" : "All frames", F.mixed]);
    var bar = add(sec, el("div", "toolbar")).lastChild;
    var search = el("input");
    search.type = "search";
    search.placeholder = "Search functions (substring)";
    search.className = "flame-search";
    var resetB = el("button", null, "Reset zoom");
    var radios = el("span");
    var found = el("span", "count");
    add(bar, search, resetB, radios, found);
    add(sec, el("p", "note", "Root at the top, callees below, width = share of the " +
      "samples. Click a frame to zoom into it, click the root or Reset to zoom out."));
    var vp = add(sec, el("div", "viewport")).lastChild;
    var canvas = add(vp, el("canvas")).lastChild;
    var ctx = canvas.getContext("2d");
    var cur = null, focus = 0, width = 0, dpr = window.devicePixelRatio || 1;
    function build(f) {
      f.names = f.names.map(visible);
      var n = f.n.length, g = { f: f, x: new Float64Array(n), depth: new Int32Array(n),
        parent: new Int32Array(n), end: new Int32Array(n), maxDepth: 0 };
      // preorder with child counts -> parent, depth, x offset, subtree end.
      var stack = [], left = [];
      for (var i = 0; i < n; i++) {
        while (stack.length && left[stack.length - 1] === 0) {
          g.end[stack.pop()] = i; left.pop();
        }
        if (stack.length) {
          var p = stack[stack.length - 1];
          left[stack.length - 1]--;
          g.parent[i] = p; g.depth[i] = g.depth[p] + 1;
          g.x[i] = g.next[p]; g.next[p] += f.v[i];
        } else { g.parent[i] = -1; g.depth[i] = 0; g.x[i] = 0; }
        if (!g.next) g.next = new Float64Array(n);
        g.next[i] = g.x[i];
        g.maxDepth = Math.max(g.maxDepth, g.depth[i]);
        stack.push(i); left.push(f.c[i]);
      }
      while (stack.length) g.end[stack.pop()] = n;
      return g;
    }
    views.forEach(function (v, i) {
      v.push(null);
      var lab = el("label", "opt"), r = el("input");
      r.type = "radio"; r.name = "flameview"; r.value = v[0]; r.checked = i === 0;
      r.addEventListener("change", function () { use(i); });
      add(radios, add(lab, r, document.createTextNode(" " + v[1] + "  ")));
    });
    if (views.length < 2) radios.style.display = "none";
    function use(i) {
      if (!views[i][3]) views[i][3] = build(views[i][2]);
      cur = views[i][3]; focus = 0; resize(); mark();
    }
    var matched = null;
    function mark() {
      var q = search.value.toLowerCase();
      if (!q) { matched = null; found.textContent = ""; schedule(); return; }
      var f = cur.f, n = f.n.length, m = new Uint8Array(n), total = 0;
      var hit = f.names.map(function (s) { return s.toLowerCase().indexOf(q) >= 0; });
      for (var i = 0; i < n; i++) {
        if (!hit[f.n[i]]) continue;
        m[i] = 1;
        var p = cur.parent[i], nested = false;
        while (p >= 0) { if (m[p]) { nested = true; break; } p = cur.parent[p]; }
        if (!nested) total += f.v[i];
      }
      matched = m;
      found.textContent = "matched " + (100 * total / Math.max(1, f.v[0])).toFixed(1) + "% of " +
        f.v[0] + " " + f.unit;
      api.flameMatchedShare = total / Math.max(1, f.v[0]);
      schedule();
    }
    function resize() {
      width = vp.clientWidth;
      var h = (cur.maxDepth + 1) * ROW + 4;
      canvas.width = width * dpr; canvas.height = h * dpr;
      canvas.style.width = width + "px"; canvas.style.height = h + "px";
      schedule();
    }
    var pending = false;
    function schedule() {
      if (!pending) { pending = true; requestAnimationFrame(function () { pending = false; draw(); }); }
    }
    function draw() {
      var f = cur.f, n = f.n.length, x0 = cur.x[focus], w = f.v[focus] || 1, scale = width / w;
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, width, canvas.height);
      ctx.font = "11px system-ui, sans-serif";
      ctx.textBaseline = "middle";
      for (var i = 0; i < n; i++) {
        var px = (cur.x[i] - x0) * scale, pw = f.v[i] * scale;
        if (pw < 0.4 || px + pw < 0 || px > width) { i = cur.end[i] - 1; continue; }
        var isAnc = cur.x[i] <= x0 && cur.x[i] + f.v[i] >= x0 + w;
        if (isAnc) { px = 0; pw = width; }
        var name = f.names[f.n[i]];
        var yy = cur.depth[i] * ROW;
        var h = hashHue(name);
        ctx.fillStyle = matched ? (matched[i] ? "#d63fa0" : "hsl(" + (20 + h % 40) + ",12%,80%)")
          : i === 0 ? "#b9c2cf" : "hsl(" + (10 + h % 45) + ",78%," + (58 + h % 12) + "%)";
        ctx.fillRect(px, yy + 1, Math.max(0.5, pw - 1), ROW - 2);
        if (pw > 30) {
          ctx.fillStyle = matched && matched[i] ? "#fff" : "#1d1306";
          ctx.fillText(clip(name, pw - 6), px + 3, yy + ROW / 2);
        }
      }
    }
    function clip(text, px) {
      if (ctx.measureText(text).width <= px) return text;
      var lo = 0, hi = Math.min(text.length, 300);
      while (lo < hi) {
        var m = (lo + hi + 1) >> 1;
        if (ctx.measureText(text.slice(0, m) + "\u2026").width <= px) lo = m; else hi = m - 1;
      }
      return lo ? text.slice(0, lo) + "\u2026" : "";
    }
    function at(px, py) {
      var f = cur.f, d = Math.floor(py / ROW), x0 = cur.x[focus], w = f.v[focus] || 1;
      var t = x0 + px / width * w;
      var i = 0;
      if (d === 0) return 0;
      for (;;) {
        var next = -1;
        for (var c = i + 1; c < cur.end[i]; c = cur.end[c]) {
          if (cur.x[c] <= t && t < cur.x[c] + f.v[c]) { next = c; break; }
        }
        if (next < 0) return -1;
        if (cur.depth[next] === d) return next;
        i = next;
      }
    }
    canvas.addEventListener("click", function (ev) {
      var i = at(ev.offsetX, ev.offsetY);
      if (i < 0) return;
      focus = i;
      schedule();
    });
    canvas.addEventListener("mousemove", function (ev) {
      var i = at(ev.offsetX, ev.offsetY);
      if (i < 0) { hideTip(); return; }
      var f = cur.f;
      showTip(ev, f.names[f.n[i]] + "\n" + f.v[i] + " " + f.unit + " (" +
        (100 * f.v[i] / Math.max(1, f.v[0])).toFixed(2) + "% of all)");
    });
    canvas.addEventListener("mouseleave", hideTip);
    search.addEventListener("input", mark);
    resetB.addEventListener("click", function () { focus = 0; schedule(); });
    window.addEventListener("resize", resize);
    api.flame = {
      focusName: function () { return cur.f.names[cur.f.n[focus]]; },
      view: function () { return views.filter(function (v) { return v[3] === cur; })[0][0]; },
      frameAt: function (px, py) { var i = at(px, py); return i < 0 ? null : cur.f.names[cur.f.n[i]]; },
      rowHeight: ROW,
    };
    use(0);
  }

  // ---- kernel sections ----------------------------------------------------
  if (data.kernels) {
    var ks = section("kernels", "Kernel sections (profiled launches)");
    add(ks, el("pre", "text", data.kernels));
  }

  api.ready = true;
})();
