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

  function start() {
    var container = document.querySelector("[data-django-jsonform-container]");
    if (!container) return;
    var folded = false;
    var each = function () {
      container.querySelectorAll("input, select, textarea").forEach(name);
      if (!folded && container.querySelector("input")) { folded = true; fold(container); }
    };
    new MutationObserver(each).observe(container, { childList: true, subtree: true });
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
    if (kind === "money") {
      sign = document.createElement("span");
      sign.className = "wt-currency";
      sign.setAttribute("aria-hidden", "true");
      sign.textContent = "₹";
      old.before(sign);
    }
    old.replaceWith(box);
    var label = row.querySelector("label[for='" + box.id + "']");
    if (label) label.textContent = label.textContent.replace(/ in rupees$/, "") +
      (kind === "money" ? " in rupees" : "");
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
