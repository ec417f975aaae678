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
    asOf.value = slider.value === head && !pinned ? "" : "@" + slider.value;
    if (!asOf.value) asOf.disabled = true; // the head: a live page, no as_of
    form.submit();
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

function memexDrawing() {
  var box = document.getElementById("provenance");
  var data = document.getElementById("provenance-data");
  if (!box || !data || typeof window.cytoscape !== "function") return;
  var graph = JSON.parse(data.textContent);
  if (!graph.nodes.length) return;
  var colours = { root: "#1f6feb", parent: "#6e7781", supported_by: "#1a7f37", contradicts: "#cf222e" };
  var elements = [];
  graph.nodes.forEach(function (n) {
    elements.push({ group: "nodes", data: { id: n.id, label: n.label, role: n.role, kind: n.kind },
                    position: { x: n.x, y: n.y } });
  });
  graph.edges.forEach(function (e, i) {
    elements.push({ group: "edges", data: { id: "e" + i, source: e.source, target: e.target, kind: e.kind } });
  });
  var cy = window.cytoscape({
    container: box,
    elements: elements,
    layout: { name: "preset", fit: true, padding: 24 },
    maxZoom: 1.1,
    minZoom: 0.2,
    style: [
      { selector: "node", style: {
        "shape": "round-rectangle", "width": 190, "height": 46, "background-color": "#f6f8fa",
        "border-width": 2, "border-color": function (n) { return colours[n.data("role")] || "#6e7781"; },
        "label": "data(label)", "font-size": 11, "color": "#24292f", "text-wrap": "wrap",
        "text-max-width": 176, "text-valign": "center", "text-halign": "center" } },
      { selector: "node[role = 'root']", style: { "background-color": "#ddf4ff", "border-width": 3 } },
      { selector: "edge", style: {
        "width": 2, "curve-style": "bezier", "target-arrow-shape": "triangle",
        "line-color": "#8c959f", "target-arrow-color": "#8c959f" } },
      { selector: "edge[kind = 'supported_by']", style: { "line-color": colours.supported_by, "target-arrow-color": colours.supported_by } },
      { selector: "edge[kind = 'contradicts']", style: { "line-color": colours.contradicts, "target-arrow-color": colours.contradicts, "line-style": "dashed" } }
    ]
  });
  cy.on("tap", "node", function (evt) {
    var id = evt.target.id();
    var asOf = new URLSearchParams(window.location.search).get("as_of");
    window.location.href = "/item/" + encodeURIComponent(id) + (asOf ? "?as_of=" + encodeURIComponent(asOf) : "");
  });
  box.setAttribute("data-drawn", String(graph.nodes.length));
}

document.addEventListener("DOMContentLoaded", function () {
  memexSlider();
  memexLive();
  memexVerify();
  memexDrawing();
});
