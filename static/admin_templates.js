// The workflow template editor: django-jsonform draws each label beside its input but
// does not tie them, so a screen reader hears "edit text" 65 times. Each input gets the
// label's words with where it sits ("Step 2, approver 1: Group"). Optional settings
// left empty (deadline, reminders, escalation, fallback) start folded.
(function () {
  "use strict";
  var NOUNS = {
    steps: "Step", fields: "Data field", approvers: "approver", reminders: "reminder",
    fallback: "fallback", choices: "choice"
  };
  var OPTIONAL = ["Deadline", "Reminders", "Escalate to", "Time limit of one attempt",
    "Give up after", "When segregation of duties rules everyone out, ask"];
  var SELDOM = ["Data fields"];  // folded unless the page lists problems to fix

  function where(name) {
    var parts = (name || "").split("\u00a7").slice(1), out = [];
    for (var i = 0; i < parts.length; i++) {
      if (/^\d+$/.test(parts[i + 1] || "")) {
        out.push((NOUNS[parts[i]] || parts[i]) + " " + (Number(parts[i + 1]) + 1));
        i++;
      }
    }
    return out.join(", ");
  }

  function ownLabel(el) {
    var row = el.closest(".rjf-form-row-inner") || el.closest(".rjf-form-row");
    var label = row && row.querySelector("label");
    return label ? label.textContent.trim() : "";
  }

  function name(el) {
    if (el.hasAttribute("aria-label") || el.labels && el.labels.length) return;
    if (el.type === "hidden" || el.classList.contains("wt-hidden")) return;
    var text = ownLabel(el), path = el.name;
    if (el.classList.contains("rjf-oneof-selector-input")) {
      var group = el.closest(".rjf-oneof-group"), named = group && group.querySelector("[name]");
      path = named ? named.name.split("\u00a7").slice(0, 3).join("\u00a7") : "";
      text = "kind of step";
    }
    var place = where(path);
    el.setAttribute("aria-label", (place ? place + ": " : "") + (text || "value"));
  }

  function fold(container) {
    container.querySelectorAll(".rjf-form-group").forEach(function (group) {
      var title = group.querySelector(".rjf-form-group-title");
      var words = title && title.firstChild.textContent.trim();
      if (SELDOM.indexOf(words) >= 0 && !document.getElementById("problems")) {
        var fold = title.querySelector(".rjf-collapse-button");
        if (fold && fold.textContent.indexOf("-") >= 0) fold.click();
        return;
      }
      if (!title || OPTIONAL.indexOf(words) < 0) return;
      var filled = Array.prototype.some.call(
        group.querySelectorAll("input:not([type=checkbox]), select"),
        function (el) { return el.value && !(el.tagName === "SELECT" && el.value === "days"); });
      var button = title.querySelector(".rjf-collapse-button");
      if (!filled && button && button.textContent.indexOf("-") >= 0) button.click();
    });
  }

  // The form's fold buttons say what they do ("Show", read as "Show Data fields"),
  // never "[-]" or "[+]": the words are an attribute the style sheet shows in place of
  // the brackets, whose text the form keeps drawing. The whole template's own group
  // does not fold.
  function foldWords(container) {
    container.querySelectorAll(".rjf-collapse-button").forEach(function (button, n) {
      if (n === 0) { if (!button.hidden) button.hidden = true; return; }
      var shut = button.textContent.indexOf("+") >= 0;
      var words = shut ? "Show" : "Hide";
      if (button.getAttribute("data-words") === words) return;
      var title = button.closest(".rjf-form-group-title");
      var what = title && title.firstChild ? title.firstChild.textContent.trim() : "";
      button.setAttribute("data-words", words);
      button.setAttribute("aria-label", words + " " + what);
    });
  }

  function start() {
    var container = document.querySelector("[data-django-jsonform-container]");
    if (!container) return;
    var folded = false;
    var each = function () {
      container.querySelectorAll("input, select, textarea").forEach(name);
      if (!folded && container.querySelector("input")) { folded = true; fold(container); }
      foldWords(container);
    };
    new MutationObserver(each).observe(container, {
      childList: true, subtree: true, characterData: true
    });
    each();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// The condition builders work without script (the value's box follows the field after
// Preview); with it, choosing a field draws its value box at once: an amount in rupees,
// a choice, a date, yes or no, and offers only the comparisons that field allows.
(function () {
  "use strict";
  var ORDERED = [">", ">=", "<", "<="];

  function valueBox(kind, choices, old) {
    var box;
    if (kind === "choice" || kind === "yesno") {
      box = document.createElement("select");
      (kind === "yesno" ? ["yes", "no"] : choices).forEach(function (c) {
        var option = document.createElement("option");
        option.value = option.textContent = c;
        box.appendChild(option);
      });
    } else {
      box = document.createElement("input");
      box.type = kind === "date" ? "date" : "text";
      if (kind === "money") { box.inputMode = "decimal"; box.autocomplete = "off"; }
    }
    box.id = old.id;
    box.name = old.name;
    return box;
  }

  function redraw(row) {
    var field = row.querySelector("select[id$='-field']");
    var chosen = field.options[field.selectedIndex];
    var kind = chosen.getAttribute("data-kind") || "text";
    var choices = (chosen.getAttribute("data-choices") || "").split("|").filter(Boolean);
    var old = row.querySelector("[id$='-value']");
    var box = valueBox(kind, choices, old);
    var sign = row.querySelector(".wt-currency");
    if (sign) sign.remove();
    // the organisation's base currency, which conditions compare amounts in
    var section = row.closest("[data-currency-symbol]");
    var symbol = section ? section.getAttribute("data-currency-symbol") : "";
    var inCurrency = " in " + (section ? section.getAttribute("data-currency-name") : "");
    if (kind === "money") {
      sign = document.createElement("span");
      sign.className = "wt-currency";
      sign.setAttribute("aria-hidden", "true");
      sign.textContent = symbol;
      old.before(sign);
    }
    old.replaceWith(box);
    var label = row.querySelector("label[for='" + box.id + "']");
    if (label) {
      var plain = label.textContent.endsWith(inCurrency) ?
        label.textContent.slice(0, -inCurrency.length) : label.textContent;
      label.textContent = plain + (kind === "money" ? inCurrency : "");
    }
    var ordered = ["money", "whole", "number", "date"].indexOf(kind) >= 0;
    var op = row.querySelector("select[id$='-op']");
    Array.prototype.forEach.call(op.options, function (option) {
      option.disabled = !ordered && ORDERED.indexOf(option.value) >= 0;
    });
    if (op.selectedOptions[0] && op.selectedOptions[0].disabled) op.value = "==";
  }

  function start() {
    document.querySelectorAll("[data-builder-row]").forEach(function (row) {
      var field = row.querySelector("select[id$='-field']");
      if (field) field.addEventListener("change", function () { redraw(row); });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// The editor is a short page: the links of "Parts of this page" show one part at a
// time. A link to anything inside a hidden part, such as a problem at the top, opens
// that part first. Every field stays in the one form and posts, shown or not.
(function () {
  "use strict";

  function start() {
    var nav = document.querySelector("nav.wt-sections[data-current]");
    if (!nav) return;
    var parts = [];
    nav.querySelectorAll("a[href^='#']").forEach(function (link) {
      var part = document.getElementById(link.hash.slice(1));
      if (part) parts.push({ link: link, part: part });
    });
    if (parts.length < 2) return;

    function partOf(el) {
      for (var i = 0; i < parts.length; i++) if (parts[i].part.contains(el)) return parts[i];
      return null;
    }
    function show(chosen) {
      parts.forEach(function (p) {
        p.part.hidden = p !== chosen;
        if (p === chosen) p.link.setAttribute("aria-current", "true");
        else p.link.removeAttribute("aria-current");
      });
    }
    function follow(hash) {
      var id = hash ? decodeURIComponent(hash.slice(1)) : "";
      var target = id && document.getElementById(id);
      var p = target && partOf(target);
      if (p) show(p);
      return p;
    }

    document.body.classList.add("wt-one-part");
    // first the part of the first problem; then the part the server chose (the preview
    // after Preview, or ?part=); then the address's #fragment; then the steps
    var first = document.querySelector("#problems a[href^='#']");
    var named = document.getElementById(nav.getAttribute("data-current"));
    var chosen = nav.hasAttribute("data-chosen");
    if (!(first && follow(first.hash)) && !(chosen && named && follow("#" + named.id)) &&
        !follow(location.hash)) show(partOf(named) || parts[0]);
    document.addEventListener("click", function (event) {
      var link = event.target.closest && event.target.closest("a[href^='#']");
      if (link && link.pathname === location.pathname) follow(link.hash);
    });
    window.addEventListener("hashchange", function () { follow(location.hash); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// Four eyes on rules turned off: Save publishes at once, so it asks first in the
// dialog the decisions use, naming the consequence, with "Keep editing" focused.
// Without script the tick box beside Save asks the same.
(function () {
  "use strict";

  function start() {
    var box = document.querySelector("[data-publish-asks]");
    var dialog = document.getElementById("confirm-decision");
    if (!box || !dialog || typeof dialog.showModal !== "function") return;
    var form = box.closest("form"), tick = box.querySelector("input[type=checkbox]");
    box.hidden = true;
    form.addEventListener("submit", function (event) {
      var by = event.submitter;
      if (!by || by.name === "_preview" || tick.checked) return;
      event.preventDefault();
      dialog.querySelector(".question").textContent = box.getAttribute("data-publish-asks");
      dialog.querySelector("#confirm-yes").textContent = "Publish now";
      var no = dialog.querySelector("#confirm-no");
      no.textContent = "Keep editing";
      dialog.returnValue = "";
      dialog.addEventListener("close", function () {
        if (dialog.returnValue !== "yes") return;
        tick.checked = true;
        form.requestSubmit(by);
      }, { once: true });
      dialog.showModal();
      no.focus();
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
