// routerd web UI: our only script; every page works without it.
// - Live panels: an element with data-events="URL" is replaced by the HTML of each event of its
//   data-event name ("checks" when absent) that URL streams (server-sent events); an event
//   "reload" reloads the page.
// - The config editor (#yaml): line numbers in #gutter, kept in step with the text and its
//   scrolling; a problem's "line L, column C" link (a[data-line], also in what htmx swaps in)
//   selects its line from that column and scrolls it into view.
// - The dependency graph (object#graph-svg): svg-pan-zoom (assets/svg-pan-zoom.min.js) fits it
//   to the view, zooms it (wheel, + and −) and pans it (drag); Fit fits it again.
"use strict";

function livePanels() {
  for (const panel of document.querySelectorAll("[data-events]")) {
    const source = new EventSource(panel.dataset.events);
    source.addEventListener(panel.dataset.event || "checks", (event) => { panel.innerHTML = event.data; });
    source.addEventListener("reload", () => { source.close(); window.location.reload(); });
  }
}

function editorGutter() {
  const text = document.getElementById("yaml");
  const gutter = document.getElementById("gutter");
  if (!text || !gutter) return;
  let shown = 0;
  const follow = () => { gutter.scrollTop = text.scrollTop; };
  const number = () => {
    const lines = text.value.split("\n").length;
    if (lines !== shown) {
      let numbers = "";
      for (let n = 1; n <= lines; n++) numbers += n + "\n";
      // One line more: room for the textarea's horizontal scroll bar.
      gutter.textContent = numbers + "\n";
      shown = lines;
    }
    follow();
  };
  gutter.hidden = false;
  number();
  text.addEventListener("input", number);
  text.addEventListener("scroll", follow);
}

// Selects line `line` (1-based) of the editor from column `column` to its end (the whole line
// when that is empty), focused and scrolled into view.
function jumpTo(line, column) {
  const text = document.getElementById("yaml");
  if (!text) return false;
  const lines = text.value.split("\n");
  const index = Math.min(Math.max(line, 1), lines.length) - 1;
  let start = 0;
  for (let i = 0; i < index; i++) start += lines[i].length + 1;
  const end = start + lines[index].length;
  const from = Math.min(start + Math.max(column - 1, 0), end);
  text.focus({ preventScroll: true });
  text.setSelectionRange(from < end ? from : start, end, "backward");
  const style = window.getComputedStyle(text);
  const lineHeight = parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize);
  text.scrollTop = Math.max(0, index * lineHeight - text.clientHeight / 3);
  const charWidth = 0.6 * parseFloat(style.fontSize);
  text.scrollLeft = Math.max(0, (from - start) * charWidth - text.clientWidth / 2);
  text.scrollIntoView({ block: "nearest" });
  return true;
}

function problemLinks() {
  document.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a[data-line]") : null;
    if (!link || !document.getElementById("yaml")) return;
    event.preventDefault();
    jumpTo(Number(link.dataset.line) || 1, Number(link.dataset.column) || 1);
  });
}

function graphPanZoom() {
  const object = document.getElementById("graph-svg");
  const controls = document.getElementById("graph-controls");
  if (!object || !controls || typeof window.svgPanZoom !== "function") return;
  let zoom = null;
  // The whole drawing in view, but never larger than its own size.
  const fit = () => {
    zoom.resize();
    zoom.fit();
    const real = zoom.getSizes().realZoom;
    if (real > 1) zoom.zoomBy(1 / real);
    zoom.center();
  };
  const start = () => {
    const doc = object.contentDocument;
    const svg = doc && doc.documentElement;
    if (zoom || !svg || svg.localName !== "svg" || doc.readyState !== "complete") return;
    svg.setAttribute("width", "100%");
    svg.setAttribute("height", "100%");
    zoom = window.svgPanZoom(object, {
      fit: true, center: true, minZoom: 0.05, maxZoom: 10, zoomScaleSensitivity: 0.25,
      dblClickZoomEnabled: false,
    });
    // Up to four times the drawing's own size, however small fitting made it.
    zoom.setMaxZoom(Math.max(10, 4 / zoom.getSizes().realZoom));
    fit();
    document.getElementById("zoom-in").addEventListener("click", () => zoom.zoomIn());
    document.getElementById("zoom-out").addEventListener("click", () => zoom.zoomOut());
    document.getElementById("zoom-fit").addEventListener("click", fit);
    window.addEventListener("resize", fit);
    controls.hidden = false;
  };
  object.addEventListener("load", start);
  start(); // loaded before this script ran
}

// Once, even when a page names this script twice.
if (!window.routerdStarted) {
  window.routerdStarted = true;
  document.addEventListener("DOMContentLoaded", () => {
    livePanels();
    editorGutter();
    problemLinks();
    graphPanZoom();
  });
}
