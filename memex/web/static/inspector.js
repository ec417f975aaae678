// memex inspector: the time slider, the live banner, the verification's progress and the
// provenance drawing. Loaded as a file (the Content-Security-Policy allows no inline script);
// it only reads: every request it makes is a GET.
"use strict";

function memexSlider() {
  var form = document.getElementById("travel");
  var slider = document.getElementById("slider");
  var asOf = document.getElementById("as-of");
  var label = document.getElementById("when-label");
  if (!form || !slider || !asOf) return;
  var timeline = [];
  var data = document.getElementById("timeline");
  if (data) timeline = JSON.parse(data.textContent);
  var time = form.querySelector(".time");
  // this page at another position: its own address (data-here, built by the server from
  // the real id and parameters) and as_of, never a form round trip of the path or the
  // fields (the decoded path shows an id's characters marked; a browser drops a
  // trailing space of a path and turns a line feed of a field into CR LF)
  var here = form.getAttribute("data-here");
  function go(value) {
    if (here === null) { if (!value) asOf.disabled = true; form.submit(); return; }
    window.location.href = here +
      (value ? (here.indexOf("?") < 0 ? "?" : "&") + "as_of=" + encodeURIComponent(value) : "");
  }
  form.addEventListener("submit", function (evt) {
    evt.preventDefault();
    go(asOf.value.trim());
  });
  slider.addEventListener("input", function () {
    var at = parseInt(slider.value, 10);
    if (label) label.textContent = "as of @" + at;
    // the time of the nearest sampled position at or after it (the records up to then)
    var shown = "";
    for (var i = 0; i < timeline.length; i++) {
      if (timeline[i][0] >= at) { shown = (timeline[i][0] === at ? "" : "≈ ") + timeline[i][1]; break; }
    }
    if (time) time.textContent = at === 0 ? "the empty store" : shown;
  });
  slider.addEventListener("change", function () {
    var head = document.body.getAttribute("data-head");
    var pinned = document.body.getAttribute("data-pinned") === "1";
    // the head: a live page (no as_of; as_of=live when memex serve --as-of pins another)
    asOf.value = slider.value === head ? (pinned ? "live" : "") : "@" + slider.value;
    go(asOf.value);
  });
}

function memexLive() {
  if (document.body.getAttribute("data-live") !== "1") return;
  var shown = parseInt(document.body.getAttribute("data-head"), 10);
  var banner = document.getElementById("live-banner");
  var reload = document.getElementById("live-reload");
  if (!banner || isNaN(shown)) return;
  reload.setAttribute("href", window.location.pathname + window.location.search);
  function poll() {
    fetch("/api/head", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (data && data.head > shown) {
          reload.textContent = "show " + (data.head - shown) + " new record(s)";
          banner.hidden = false;
        }
      })
      .catch(function () {});
  }
  window.setInterval(poll, 3000);
}

function memexVerify() {
  var box = document.getElementById("verify");
  if (!box || box.getAttribute("data-state") !== "running") return;
  var bar = document.getElementById("verify-progress");
  var count = document.getElementById("verify-count");
  var phase = document.getElementById("verify-phase");
  function poll() {
    fetch("/api/verify", { credentials: "same-origin" })
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (s.state !== "running") { window.location.reload(); return; }
        if (bar) { bar.max = s.total || 1; bar.value = s.done; }
        if (count) count.textContent = s.done + " / " + s.total;
        if (phase) phase.textContent = s.phase || "starting";
      })
      .catch(function () {});
  }
  window.setInterval(poll, 500);
}

// A label in at most `lines` lines of at most `width` pixels (measured as the canvas draws
// it), broken at spaces (anywhere in a word longer than a line), ending in "…" when cut.
function memexFitLabel(text, measure, width, lines) {
  var chars = Array.from(text);
  var out = [];
  var line = "";
  var i = 0;
  while (i < chars.length) {
    var c = chars[i];
    if (measure.measureText(line + c).width <= width) { line += c; i++; continue; }
    if (out.length === lines - 1) break;
    var cut = c === " " ? -1 : line.lastIndexOf(" ");
    if (cut > 0) { out.push(line.slice(0, cut)); line = line.slice(cut + 1); }
    else { out.push(line); line = ""; if (c === " ") i++; }
  }
  if (i < chars.length) {
    var kept = Array.from(line);
    while (kept.length && measure.measureText(kept.join("") + "…").width > width) kept.pop();
    line = kept.join("").replace(/\s+$/, "") + "…";
  }
  out.push(line);
  return out.join("\n");
}

// The provenance drawing: the layers the server placed (memex.web.pages._drawing), at
// zoom 1 so that labels keep their size; the canvas is as large as the drawing and
// scrolls inside its frame when it is larger. Nodes are "n0", "n1", ...: an item id is
// data only (any string), never part of a Cytoscape id or selector.
function memexDrawing() {
  var box = document.getElementById("provenance");
  var wrap = document.getElementById("provenance-wrap");
  var data = document.getElementById("provenance-data");
  var tip = document.getElementById("provenance-tip");
  if (!box || !wrap || !data || typeof window.cytoscape !== "function") return;
  var graph = JSON.parse(data.textContent);
  if (!graph.nodes.length) return;
  var FONT = 12, NODE_W = 200, NODE_H = 44, PAD = 24, LINES = 2;
  var family = window.getComputedStyle(box).fontFamily;
  var measure = document.createElement("canvas").getContext("2d");
  measure.font = FONT + "px " + family;
  var colours = { root: "#1f6feb", parent: "#6e7781", supported_by: "#1a7f37", contradicts: "#cf222e" };
  var elements = [];
  graph.nodes.forEach(function (n, i) {
    elements.push({ group: "nodes", position: { x: n.x, y: n.y }, data: {
      id: "n" + i, item: n.item, href: n.href, full: n.full, about: n.about, role: n.role,
      label: memexFitLabel(n.full, measure, NODE_W - 20, LINES) } });
  });
  graph.edges.forEach(function (e, i) {
    elements.push({ group: "edges", data: {
      id: "e" + i, source: "n" + e.source, target: "n" + e.target, kind: e.also || e.kind } });
  });
  var drawnW = graph.width + NODE_W + 2 * PAD;
  var drawnH = graph.height + NODE_H + 2 * PAD;
  box.style.height = drawnH + "px"; // first: a vertical scroll bar narrows the frame
  var width = Math.max(wrap.clientWidth, drawnW);
  box.style.width = width + "px";
  var cy = window.cytoscape({
    container: box,
    elements: elements,
    layout: { name: "preset" },
    zoom: 1,
    pan: { x: (width - drawnW) / 2 + PAD + NODE_W / 2, y: PAD + NODE_H / 2 },
    minZoom: 1,
    maxZoom: 1,
    userZoomingEnabled: false,
    userPanningEnabled: false,
    boxSelectionEnabled: false,
    autoungrabify: true,
    autounselectify: true,
    style: [
      { selector: "node", style: {
        "shape": "round-rectangle", "width": NODE_W, "height": NODE_H, "background-color": "#f6f8fa",
        "border-width": 2, "border-color": function (n) { return colours[n.data("role")] || "#6e7781"; },
        "label": "data(label)", "font-size": FONT, "font-family": family, "color": "#24292f",
        "text-wrap": "wrap", "text-max-width": NODE_W - 8, "text-valign": "center",
        "text-halign": "center" } },
      { selector: "node[role = 'root']", style: { "background-color": "#ddf4ff", "border-width": 3 } },
      // right-angled edges turning between two columns: never across a box. The column
      // beside the item lists its supporters, then its contradicters below them: the
      // contradicters' edges turn nearer the item, so that neither crosses the other
      { selector: "edge", style: {
        "width": 2, "curve-style": "taxi", "taxi-direction": "horizontal", "taxi-turn": "50%",
        "taxi-turn-min-distance": 8, "target-arrow-shape": "triangle",
        "line-color": "#8c959f", "target-arrow-color": "#8c959f" } },
      { selector: "edge[kind = 'supported_by']", style: { "line-color": colours.supported_by, "target-arrow-color": colours.supported_by, "taxi-turn": "40%" } },
      { selector: "edge[kind = 'contradicts']", style: { "line-color": colours.contradicts, "target-arrow-color": colours.contradicts, "line-style": "dashed", "taxi-turn": "70%" } }
    ]
  });
  // the item in view when the drawing is larger than its frame, and a note saying so
  var scrolls = box.offsetWidth > wrap.clientWidth || box.offsetHeight > wrap.clientHeight;
  var note = document.getElementById("provenance-scroll");
  if (note) note.hidden = !scrolls;
  var root = cy.nodes().filter(function (n) { return n.data("role") === "root"; });
  if (root.length && scrolls) {
    var at = root[0].renderedPosition();
    wrap.scrollLeft = Math.max(0, at.x - wrap.clientWidth / 2);
    wrap.scrollTop = Math.max(0, at.y - wrap.clientHeight / 2);
  }
  cy.on("tap", "node", function (evt) {
    var asOf = new URLSearchParams(window.location.search).get("as_of");
    var to = evt.target.data("href"); // /item/ID, or /item?id=ID (pages.item_address)
    window.location.href = to +
      (asOf ? (to.indexOf("?") < 0 ? "?" : "&") + "as_of=" + encodeURIComponent(asOf) : "");
  });
  if (tip) {
    cy.on("mouseover", "node", function (evt) {
      var at = evt.target.renderedPosition();
      tip.textContent = evt.target.data("full") + "\n" + evt.target.data("about");
      tip.hidden = false;
      var left = Math.min(at.x - NODE_W / 2, box.offsetWidth - tip.offsetWidth - 4);
      tip.style.left = Math.max(4, left) + "px";
      tip.style.top = (at.y + NODE_H / 2 + 6) + "px";
      box.style.cursor = "pointer";
    });
    cy.on("mouseout", "node", function () { tip.hidden = true; box.style.cursor = ""; });
  }
  box.setAttribute("data-drawn", String(graph.nodes.length));
}

document.addEventListener("DOMContentLoaded", function () {
  memexSlider();
  memexLive();
  memexVerify();
  memexDrawing();
});
