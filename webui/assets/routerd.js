// routerd web UI: live panels. An element with data-events="URL" is replaced by the HTML of
// each `checks` event that URL streams (server-sent events). No other script of ours.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const panel of document.querySelectorAll("[data-events]")) {
    const source = new EventSource(panel.dataset.events);
    source.addEventListener("checks", (event) => { panel.innerHTML = event.data; });
  }
});
