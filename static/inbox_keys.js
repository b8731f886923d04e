/* The inbox's keyboard shortcuts, as mail clients have them: j/k move the selection,
   o opens the request, a/r/s approve, reject or send back by pressing the row's own
   button (so the reason rule, the rejection's question and the Undo of app.js apply
   exactly as to a click), ? lists them. Off while typing in a box or while a dialog is
   open. The page works without this. */
(function () {
  "use strict";
  var list = document.querySelector("ul.inbox[data-keys]");
  var help = document.getElementById("inbox-keys");
  if (!list || !help) { return; }
  var status = document.getElementById("inbox-status");
  var current = null;
  var DECISIONS = { a: "approve", r: "reject", s: "send_back" };

  var hint = document.querySelector(".keys-hint");
  var opener = document.getElementById("keys-open");
  if (hint) { hint.hidden = false; }

  function say(text) {
    if (!status) { return; }
    status.hidden = false;
    status.className = "flash";
    status.textContent = text;
  }

  function rows() {
    return Array.prototype.filter.call(list.querySelectorAll("li.task"), function (row) {
      return !row.hidden && row.isConnected;
    });
  }

  function select(row) {
    if (current) { current.classList.remove("selected"); current.removeAttribute("aria-current"); }
    current = row;
    if (!row) { return; }
    row.classList.add("selected");
    row.setAttribute("aria-current", "true");
    if (!row.hasAttribute("tabindex")) { row.setAttribute("tabindex", "-1"); }
    row.focus();
    row.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    var all = rows();
    if (!all.length) { return; }
    var at = current ? all.indexOf(current) : -1;
    if (at === -1) {
      /* the selected row was decided (hidden): go on from where it stood */
      select(step > 0 ? all[0] : all[all.length - 1]);
      return;
    }
    select(all[Math.min(all.length - 1, Math.max(0, at + step))]);
  }

  function typing(target) {
    if (!target || !target.closest) { return false; }
    return Boolean(target.closest("input, textarea, select, [contenteditable=''], [contenteditable=true]"));
  }

  function openHelp() {
    if (typeof help.showModal === "function") { help.showModal(); } else { help.setAttribute("open", ""); }
  }
  if (opener) { opener.addEventListener("click", openHelp); }

  list.addEventListener("focusin", function (event) {
    var row = event.target.closest("li.task");
    if (row && row !== current) {
      if (current) { current.classList.remove("selected"); current.removeAttribute("aria-current"); }
      current = row;
      row.classList.add("selected");
      row.setAttribute("aria-current", "true");
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) { return; }
    if (typing(event.target) || document.querySelector("dialog[open]")) { return; }
    var key = event.key;
    if (key === "?") { event.preventDefault(); openHelp(); return; }
    if (key === "j" || key === "k") { event.preventDefault(); move(key === "j" ? 1 : -1); return; }
    if (key !== "o" && !DECISIONS[key]) { return; }
    if (!current || !current.isConnected || current.hidden) {
      say("Choose a request first: press j to move to one.");
      return;
    }
    event.preventDefault();
    if (key === "o") {
      var link = current.querySelector("a.subject");
      if (link) { link.click(); }
      return;
    }
    var button = current.querySelector("form.decide button[value=" + DECISIONS[key] + "]");
    if (!button && current.querySelector("form.decide")) {
      /* its step sends a rejection back, as its send-back does: one button for both */
      say("This step has no separate rejection: press s to send it back.");
      return;
    }
    if (!button) {
      say("This request waits for your changes: press o to open it.");
      return;
    }
    button.click();
  });
})();
