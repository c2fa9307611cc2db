/**
 * The console's only script and style, served as files by the Worker
 * (/admin/console/console.js and console.css): the Content-Security-Policy allows no
 * inline script or style, and there is no front-end build. The script only enhances
 * pages that work without it: times in the viewer's time zone, the copy button of a new
 * API key, and the filter preview answering as the operator types. It writes text with
 * `textContent`, never markup.
 */

export const CONSOLE_SCRIPT = `"use strict";
(function () {
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  function localTimes(root) {
    root.querySelectorAll("time[data-local]").forEach(function (el) {
      var at = new Date(el.getAttribute("datetime"));
      if (isNaN(at.getTime())) return;
      el.title = el.getAttribute("datetime");
      el.textContent = at.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
    });
  }

  function copyButtons() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      button.hidden = false;
      button.addEventListener("click", function () {
        var source = document.getElementById(button.getAttribute("data-copy"));
        var status = document.getElementById(button.getAttribute("data-status"));
        if (!source) return;
        navigator.clipboard.writeText(source.value || source.textContent || "").then(
          function () { if (status) status.textContent = "Copied to the clipboard"; },
          function () { source.select && source.select(); if (status) status.textContent = "Copying was refused; the key is selected, copy it with the keyboard"; }
        );
      });
    });
  }

  function livePreview() {
    var form = document.getElementById("preview-form");
    if (!form) return;
    var timer = 0;
    var sequence = 0;
    function set(id, text) { var el = document.getElementById(id); if (el) el.textContent = text; }
    function run() {
      var mine = ++sequence;
      var body = new URLSearchParams(new FormData(form));
      fetch(form.action, { method: "POST", body: body, headers: { accept: "application/json", "x-csrf-token": csrf }, credentials: "same-origin" })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (mine !== sequence) return;
          set("preview-error", answer.error ? answer.error + (answer.problems || []).map(function (p) { return "\\n" + (p.path || "(the document)") + ": " + p.message; }).join("") : "");
          set("preview-rule", answer.rule == null ? "none (no rule of the set matches this tool)" : answer.rule + (answer.mode === "shadow" ? " (shadow: measured, not applied)" : ""));
          set("preview-bytes", answer.bytesSaved == null ? "" : answer.bytesSaved + " bytes saved (" + answer.bytesBefore + " → " + answer.bytesAfter + ")");
          set("preview-output", answer.filtered === undefined ? "" : JSON.stringify(answer.filtered, null, 2));
        })
        .catch(function () { if (mine === sequence) set("preview-error", "The preview could not be fetched; is the gateway running?"); });
    }
    form.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 300); });
    form.addEventListener("submit", function (event) {
      if (event.submitter && event.submitter.hasAttribute("formaction")) return; // Save goes to the server as a form
      event.preventDefault(); clearTimeout(timer); run();
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    localTimes(document);
    copyButtons();
    livePreview();
  });
})();
`;

export const CONSOLE_STYLE = `:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #57606a; --line: #d0d7de; --accent: #0b57d0; --bad: #b3261e; --good: #1a7f37; --soft: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9aa4ae; --line: #30363d; --accent: #6ea8fe; --bad: #ff7b72; --good: #56d364; --soft: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; }
header { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--soft); }
.brand { font-weight: 600; }
nav ul { display: flex; flex-wrap: wrap; gap: .25rem .75rem; list-style: none; margin: 0; padding: 0; }
nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
.sign-out { margin-left: auto; }
main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
main.bare { max-width: 28rem; }
h1 { font-size: 1.5rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1.05rem; margin: 1rem 0 .25rem; }
table { border-collapse: collapse; width: 100%; display: block; overflow-x: auto; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; }
input, select, textarea, button { font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--muted); border-radius: 4px; padding: .35rem .5rem; max-width: 100%; }
textarea { width: 100%; font-family: ui-monospace, monospace; font-size: 13px; }
button { cursor: pointer; background: var(--soft); }
button.danger { color: var(--bad); border-color: var(--bad); }
label { font-weight: 600; display: block; }
.stack { display: flex; flex-direction: column; gap: .5rem; }
.row { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: end; }
.row > div { display: flex; flex-direction: column; }
.problems { color: var(--bad); border-left: 4px solid var(--bad); padding: .25rem .75rem; white-space: pre-wrap; }
.problems:empty, .notice:empty { display: none; }
.notice { border-left: 4px solid var(--good); padding: .25rem .75rem; }
.empty { color: var(--muted); font-style: italic; }
.muted { color: var(--muted); }
pre { background: var(--soft); padding: .5rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; font-size: 13px; }
code { word-break: break-word; }
.badge { display: inline-block; padding: 0 .4rem; border-radius: 4px; border: 1px solid var(--line); font-size: 13px; }
.badge.ok { color: var(--good); border-color: var(--good); }
.badge.bad { color: var(--bad); border-color: var(--bad); }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 22rem), 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .75rem; min-width: 0; }
.card h2 { margin-top: 0; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .15rem .75rem; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
svg.chart { width: 100%; height: 48px; color: var(--accent); }
svg.chart .errors { color: var(--bad); }
.icon-preview { width: 32px; height: 32px; object-fit: contain; }
.key { width: 100%; font-family: ui-monospace, monospace; }
details summary { cursor: pointer; }
mark.invisible { background: var(--soft); color: var(--bad); border: 1px dashed var(--bad); border-radius: 3px; padding: 0 .2rem; font-family: ui-monospace, monospace; font-size: 13px; }
.badge.severity-high { color: var(--bad); border-color: var(--bad); font-weight: 600; }
tr.pin-event > td:first-child { border-left: 4px solid var(--bad); }
tr.pin-event { background: var(--soft); }
.badge.pin { color: var(--accent); border-color: var(--accent); }
.severities .badge { margin-right: .25rem; }
.held-change { margin-top: .35rem; padding-left: .5rem; border-left: 3px solid var(--bad); }
.change { margin: .75rem 0; }
.change h4 { margin: 0 0 .5rem; font-size: 1rem; }
.findings { margin: 0; padding-left: 1.1rem; }
.digest { font-size: 12px; }
table.diff pre { margin: 0; max-width: 28rem; }
`;
