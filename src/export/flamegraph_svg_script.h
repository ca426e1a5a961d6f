// The script inside strata's SVG flame graph: flamegraph.pl's interactions,
// written for strata's layout (export/flamegraph_svg.h).
//   - click a frame: it fills the width, its callees scale with it, its callers
//     span the width faded (class "parent"), everything else is hidden;
//     "Reset Zoom" (top left), a click on the root or Escape undoes it;
//   - "Search" (top right), Ctrl-F or "/": a regular expression (a term that is
//     not one is searched as plain text); matching frames turn purple and
//     "Matched: N%" (bottom right) says which share of all samples they hold,
//     nested matches counted once; "Reset Search" or Escape clears it;
//   - hovering a frame names it at the bottom left;
//   - ?s=TERM in the URL searches on load and ?x=X&y=Y zooms to the frame at
//     that place, as flamegraph.pl's links do.
// Names come only from the frames' <title> text and go back only as text
// (textContent), never as markup or code: the script is the same bytes for
// every profile, and nothing in it can be closed by a name.
#pragma once

#include <string_view>

namespace strata::exporter {

inline constexpr std::string_view kFlameGraphScript = R"JS(
"use strict";
var fg = {frames: [], byNode: new WeakMap(), zoomed: null, term: null};
function fg_init() {
  var svg = document.documentElement;
  fg.padX = +svg.getAttribute("data-pad-x");
  fg.fontSize = +svg.getAttribute("font-size");
  fg.plot = +svg.getAttribute("width") - 2 * fg.padX;
  fg.details = document.getElementById("details");
  fg.unzoom = document.getElementById("unzoom");
  fg.search = document.getElementById("search");
  fg.matched = document.getElementById("matched");
  var groups = document.querySelectorAll("#frames > g");
  for (var i = 0; i < groups.length; i++) {
    var g = groups[i], rect = g.querySelector("rect"), label = g.querySelector("title").textContent;
    var text = g.querySelector("text");
    if (!text) {  // too narrow for a label until it is zoomed
      text = document.createElementNS("http://www.w3.org/2000/svg", "text");
      text.setAttribute("y", (+rect.getAttribute("y") + +rect.getAttribute("height") - 3).toFixed(2));
      g.appendChild(text);
    }
    var f = {g: g, rect: rect, text: text, label: label,
             name: label.substring(0, label.lastIndexOf(" (")),
             x: +rect.getAttribute("x"), w: +rect.getAttribute("width"),
             y: +rect.getAttribute("y"), fill: rect.getAttribute("fill")};
    fg.frames.push(f);
    fg.byNode.set(g, f);
  }
  fg.root = fg.frames.length ? fg.frames[0] : null;
  svg.addEventListener("click", fg_click);
  svg.addEventListener("mouseover", function (e) {
    var f = fg_frame(e.target);
    if (f) fg.details.textContent = "Function: " + f.label;
  });
  svg.addEventListener("mouseout", function () { fg.details.textContent = " "; });
  window.addEventListener("keydown", function (e) {
    if ((e.key === "f" && (e.ctrlKey || e.metaKey)) || e.key === "/") {
      e.preventDefault();
      fg_search_prompt();
    } else if (e.key === "Escape") {
      fg_reset_search();
      fg_reset_zoom();
    }
  });
  var params = new URLSearchParams(window.location.search);
  if (params.has("x") && params.has("y")) {
    var x = +params.get("x"), y = +params.get("y");
    for (var j = 0; j < fg.frames.length; j++) {
      var c = fg.frames[j];
      if (Math.abs(c.y - y) < 0.5 && x >= c.x && x < c.x + c.w) { fg_zoom(c); break; }
    }
  }
  if (params.get("s")) fg_search(params.get("s"));
}
function fg_frame(node) {
  for (; node && node !== document.documentElement; node = node.parentNode) {
    var f = fg.byNode.get(node);
    if (f) return f;
  }
  return null;
}
function fg_click(e) {
  if (e.target === fg.unzoom || e.target.parentNode === fg.unzoom) return fg_reset_zoom();
  if (e.target === fg.search || e.target.parentNode === fg.search) {
    return fg.term === null ? fg_search_prompt() : fg_reset_search();
  }
  var f = fg_frame(e.target);
  if (f) f === fg.root ? fg_reset_zoom() : fg_zoom(f);
}
// FlameGraph's label rule, as strata draws it: 0.59 x font size per
// character, 3 px of padding each side, no label under 3 characters, ".." when cut.
function fg_label(f, w) {
  var chars = Math.floor((w - 6) / (fg.fontSize * 0.59));
  var name = Array.from(f.name);
  if (chars < 3) return "";
  if (name.length <= chars) return f.name;
  return name.slice(0, chars - 2).join("") + "..";
}
function fg_place(f, x, w, cls) {
  f.rect.setAttribute("x", x.toFixed(2));
  f.rect.setAttribute("width", w.toFixed(2));
  f.text.setAttribute("x", (x + 3).toFixed(2));
  f.text.textContent = fg_label(f, w);
  f.g.setAttribute("class", cls);
}
var kEps = 0.05;  // px: positions are written with two decimals
function fg_zoom(z) {
  fg.zoomed = z;
  var ratio = fg.plot / z.w;
  for (var i = 0; i < fg.frames.length; i++) {
    var f = fg.frames[i];
    if (f.y > z.y && f.x <= z.x + kEps && f.x + f.w >= z.x + z.w - kEps) {
      fg_place(f, fg.padX, fg.plot, "parent");
    } else if (f === z || (f.y < z.y && f.x >= z.x - kEps && f.x + f.w <= z.x + z.w + kEps)) {
      fg_place(f, fg.padX + (f.x - z.x) * ratio, f.w * ratio, "");
    } else {
      f.g.setAttribute("class", "hide");
    }
  }
  fg.unzoom.setAttribute("class", "");
}
function fg_reset_zoom() {
  if (!fg.zoomed) return;
  fg.zoomed = null;
  for (var i = 0; i < fg.frames.length; i++) {
    var f = fg.frames[i];
    fg_place(f, f.x, f.w, "");
  }
  fg.unzoom.setAttribute("class", "hide");
}
function fg_search_prompt() {
  var term = window.prompt("Search for (a regular expression, e.g. ^numpy\\.):", fg.term || "");
  if (term) fg_search(term);
}
function fg_regexp(term) {
  try { return new RegExp(term); } catch (err) {
    return new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  }
}
// Marks the frames whose name matches; returns the share of all samples they
// hold, a frame inside a matched caller counted once (its x range is inside).
function fg_search(term) {
  var re = fg_regexp(term), spans = [];
  for (var i = 0; i < fg.frames.length; i++) {
    var f = fg.frames[i];
    if (re.test(f.name)) {
      f.rect.setAttribute("fill", "rgb(230,0,230)");
      spans.push([f.x, f.x + f.w]);
    } else {
      f.rect.setAttribute("fill", f.fill);
    }
  }
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var covered = 0, end = -Infinity;
  for (var k = 0; k < spans.length; k++) {
    var from = Math.max(spans[k][0], end);
    if (spans[k][1] > from) { covered += spans[k][1] - from; end = spans[k][1]; }
  }
  var share = fg.root && fg.root.w > 0 ? 100 * covered / fg.root.w : 0;
  fg.term = term;
  fg.search.textContent = "Reset Search";
  fg.matched.textContent = "Matched: " + share.toFixed(1) + "%";
  fg.matched.setAttribute("class", "");
  return share;
}
function fg_reset_search() {
  if (fg.term === null) return;
  fg.term = null;
  for (var i = 0; i < fg.frames.length; i++) fg.frames[i].rect.setAttribute("fill", fg.frames[i].fill);
  fg.search.textContent = "Search";
  fg.matched.setAttribute("class", "hide");
}
window.addEventListener("load", fg_init);
)JS";

}  // namespace strata::exporter
