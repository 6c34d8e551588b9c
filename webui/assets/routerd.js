// routerd web UI: live panels. An element with data-events="URL" is replaced by the HTML of
// each event of its data-event name ("checks" when absent) that URL streams (server-sent
// events); an event "reload" reloads the page. No other script of ours.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  for (const panel of document.querySelectorAll("[data-events]")) {
    const source = new EventSource(panel.dataset.events);
    source.addEventListener(panel.dataset.event || "checks", (event) => { panel.innerHTML = event.data; });
    source.addEventListener("reload", () => { source.close(); window.location.reload(); });
  }
});
