/* Approvals pages: the browser's time zone for the server, and inbox decisions without
   a reload. Plain forms keep working without this script. */
(function () {
  "use strict";

  // After a failed submit the focus moves to the first field at fault (Django marks it
  // aria-invalid and points its aria-describedby at the error); the summary above the
  // form lists them all.
  var errorSummary = document.getElementById("error-summary");
  if (errorSummary) {
    var firstInvalid = document.querySelector(
      ".field.invalid input:not([type=hidden]), .field.invalid select, .field.invalid textarea"
    );
    (firstInvalid || errorSummary).focus();
  }
  try {
    var zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone && document.cookie.indexOf("tz=" + zone) === -1) {
      document.cookie = "tz=" + encodeURIComponent(zone).replace(/%2F/g, "/") + "; path=/; SameSite=Lax; max-age=31536000";
    }
  } catch (e) { /* the server shows UTC, named */ }

  /* A colleague typed by name: suggestions from /people fill the page's datalist (at
     most ten, whatever the organisation's size); the field keeps working as plain
     text without this. */
  document.querySelectorAll("input[data-people]").forEach(function (input) {
    var list = document.getElementById(input.getAttribute("list"));
    var timer = null;
    var asked = "";
    if (!list) { return; }
    input.addEventListener("input", function () {
      var text = input.value.trim();
      clearTimeout(timer);
      if (!text || text === asked) { return; }
      timer = setTimeout(function () {
        asked = text;
        fetch(input.getAttribute("data-people") + "?q=" + encodeURIComponent(text), {
          headers: { "Accept": "application/json" },
          credentials: "same-origin"
        }).then(function (response) {
          return response.ok ? response.json() : { people: [] };
        }).then(function (answer) {
          list.replaceChildren.apply(list, answer.people.map(function (p) {
            var option = document.createElement("option");
            option.value = p.username;
            option.label = p.label;
            return option;
          }));
        }, function () { /* no suggestions; typing the user name still works */ });
      }, 150);
    });
  });

  /* -- decisions ------------------------------------------------------------------
     A rejection and a send-back need the reason the step asks for, a rejection is
     confirmed naming the request, and an implicit submission (Enter) decides nothing.
     The server holds every one of these rules too; this only says so sooner. */

  /* static/confirm.js: the one dialog that asks first */
  function ask(question, yesLabel, yesClass) {
    return window.approvalsAsk ? window.approvalsAsk(question, yesLabel, yesClass)
      : Promise.resolve(window.confirm(question));
  }

  function reasonMissing(form, decision) {
    var box = form.elements.namedItem("comment");
    return (decision === "reject" || decision === "send_back") &&
      form.dataset.reasonRequired === "yes" && !(box && box.value.trim());
  }

  function refuse(form, decision) {
    var box = form.elements.namedItem("comment");
    var note = form.querySelector(".reason-missing");
    if (!note) {
      note = document.createElement("p");
      note.className = "reason-missing error";
      note.id = (box && box.id ? box.id : "decision") + "-missing";
      note.setAttribute("role", "alert");
      form.insertBefore(note, box || form.firstChild);
    }
    note.textContent = form.dataset[decision === "reject" ? "reasonReject" : "reasonSendBack"];
    if (box) {
      box.setAttribute("aria-invalid", "true");
      box.setAttribute("aria-describedby", note.id);
      box.focus();
    }
  }

  function clearRefusal(form) {
    var note = form.querySelector(".reason-missing");
    var box = form.elements.namedItem("comment");
    if (note) { note.remove(); }
    if (box) { box.removeAttribute("aria-invalid"); box.removeAttribute("aria-describedby"); }
  }

  /* What a decision's button says it does, and its words once recorded (the server's
     words.decisions, on the button): "Send back to Alice", "Sent R-8 back to Alice". */
  function button(form, decision) {
    return form.querySelector("button[name=decision][value=" + decision + "]");
  }

  function label(form, decision) {
    var b = button(form, decision);
    return b ? b.textContent.trim() : decision;
  }

  function doneWords(form, decision) {
    var b = button(form, decision);
    var words = (b && b.dataset.done) || decision + " {what}";
    return words.replace("{what}", form.dataset.subject);
  }

  function asksFirst(form, decision) {
    return decision === "reject" && form.dataset.askFirst === "yes";
  }

  function hidden(form, name, value) {
    var input = form.querySelector("input[type=hidden][name=" + name + "]");
    if (!input) {
      input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      form.appendChild(input);
    }
    input.value = value;
  }

  /* The workflow page: a plain post once the reason is there and a rejection confirmed. */
  document.querySelectorAll("form.decide[data-question]").forEach(function (form) {
    if (form.closest("ul.inbox")) { return; }
    form.addEventListener("submit", function (event) {
      var decision = event.submitter ? event.submitter.value : null;
      if (!decision) { event.preventDefault(); return; }
      if (reasonMissing(form, decision)) { event.preventDefault(); refuse(form, decision); return; }
      clearRefusal(form);
      if (!asksFirst(form, decision) || form.dataset.confirmed) { return; }
      event.preventDefault();
      ask(form.dataset.question, label(form, "reject"), "reject").then(function (yes) {
        if (!yes) { return; }
        form.dataset.confirmed = "1";
        hidden(form, "decision", "reject");
        hidden(form, "confirmed", "yes");
        form.submit();
      });
    });
  });

  /* The request page: a held decision's bar (approvals/_held.html) asks, once its
     window has passed, whether it is recorded, and then shows the page as it is. Its
     Undo is a plain form. */
  if (!document.getElementById("inbox-status")) {
    document.querySelectorAll(".held[data-release]").forEach(function (bar) {
      var token = bar.querySelector("input[name=csrfmiddlewaretoken]").value;
      var tries = 0;
      function ask() {
        var body = new FormData();
        body.set("csrfmiddlewaretoken", token);
        fetch(bar.dataset.release, {
          method: "POST",
          body: body,
          credentials: "same-origin",
          headers: { "Accept": "application/json" }
        }).then(function (response) { return response.json(); }).then(function (answer) {
          if (answer.state === "held" && tries < 20) { tries += 1; setTimeout(ask, 1000); return; }
          window.location.reload();
        }, function () {
          if (tries < 20) { tries += 1; setTimeout(ask, 2000); }
        });
      }
      setTimeout(ask, ((Number(bar.dataset.seconds) || 0) + 0.5) * 1000);
    });
  }

  var status = document.getElementById("inbox-status");
  if (!status) { return; }

  function readJson(id) {
    var node = document.getElementById(id);
    try { return node ? JSON.parse(node.textContent) : {}; } catch (e) { return {}; }
  }
  var moneyParts = readJson("money-parts");
  var bulkForm = document.getElementById("bulk");

  function say(text, ok) {
    status.hidden = false;
    status.className = "flash " + (ok ? "success" : "error");
    status.textContent = text;
  }

  function post(action, body) {
    return fetch(action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (response) {
      return response.json().catch(function () {
        return { ok: false, message: "Something went wrong (" + response.status + "); please try again." };
      });
    }, function () {
      return { ok: false, message: "The server could not be reached; please try again." };
    });
  }

  function send(form, decision) {
    var body = new FormData(form);
    if (decision) { body.set("decision", decision); }
    return post(form.action, body);
  }

  function emptied() {
    if (document.querySelector("li.task")) { return; }
    var list = document.querySelector("ul.inbox");
    var empty = document.createElement("p");
    empty.className = "empty";
    empty.textContent = "Nothing else waits for you.";
    if (list) { list.replaceWith(empty); }
    if (bulkForm) { bulkForm.remove(); }
  }

  function settle(form, answer) {
    var row = form.closest("li.task");
    if (answer.ok && row) {
      row.remove();
      emptied();
    } else {
      setBusy(form, false);
    }
    return answer;
  }

  function setBusy(form, busy) {
    var row = form.closest("li.task") || form;
    row.querySelectorAll("button").forEach(function (b) { b.disabled = busy; });
    row.setAttribute("aria-busy", busy ? "true" : "false");
  }

  /* Undo: a decision is sent at once and held by the server for a few seconds
     (approvals.services.held_decisions). Undo asks the server to cancel it; once the
     window has passed the page asks whether it is recorded (the server records a due
     one then, and a periodic job records it anyway), so a closed tab or a lost
     connection after the server's answer loses nothing. */
  function csrf(form) {
    var input = form.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function heldBody(token) {
    var body = new FormData();
    body.set("csrfmiddlewaretoken", token);
    return body;
  }

  /* Wires a held decision's bar: its Undo, and the question once the window passed.
     ``done(answer)`` when recorded or refused, ``undone(answer)`` when undone. */
  function watchHeld(bar, links, seconds, token, done, undone) {
    var timer = 0, tries = 0;
    function ask() {
      post(links.release, heldBody(token)).then(function (answer) {
        if (answer.state === "held" && tries < 20) {
          tries += 1;
          timer = setTimeout(ask, 1000);
          return;
        }
        bar.remove();
        done(answer);
      });
    }
    timer = setTimeout(ask, (seconds + 0.5) * 1000);
    var undo = bar.querySelector("button.undo");
    undo.addEventListener("click", function (event) {
      event.preventDefault();
      clearTimeout(timer);
      undo.disabled = true;
      post(links.undo, heldBody(token)).then(function (answer) {
        if (answer.ok) { bar.remove(); undone(answer); return; }
        say(answer.message, false);
        timer = setTimeout(ask, 0);
      });
    });
    return undo;
  }

  /* After an undo the same form sends a new decision: a new request id. */
  function renew(form) {
    var id = form.querySelector("input[name=request_id]");
    if (id) { id.value = id.value.slice(0, 96) + "-" + Date.now().toString(36); }
  }

  function heldBar(words, subject, decision) {
    var bar = document.createElement("li");
    bar.className = "held";
    var text = document.createElement("span");
    text.setAttribute("role", "status");  /* the li stays a list item */
    text.textContent = words;
    var undo = document.createElement("button");
    undo.type = "button";
    undo.className = "undo";
    undo.textContent = "Undo";
    undo.setAttribute("aria-label", "Undo: " + words);
    bar.append(text, " ", undo);
    return bar;
  }

  function recorded(row, answer) {
    if (answer.ok) {
      row.remove();
      emptied();
    } else {
      row.hidden = false;
    }
    say(answer.message, answer.ok);
  }

  /* Sends ``decision`` to be held; the row waits behind an Undo once the server has it. */
  function hold(form, decision) {
    var row = form.closest("li.task");
    var body = new FormData(form);
    body.set("decision", decision);
    body.set("hold", "yes");
    if (decision === "reject") { body.set("confirmed", "yes"); }
    form.dataset.sending = "1";
    setBusy(form, true);
    return post(form.action, body).then(function (answer) {
      setBusy(form, false);
      if (!answer.ok || !answer.held) {
        delete form.dataset.sending;
        say(answer.message, false);
        return answer;
      }
      var bar = heldBar(answer.message, form.dataset.subject, decision);
      row.before(bar);
      row.hidden = true;
      var undo = watchHeld(bar, answer, answer.seconds, csrf(form), function (end) {
        delete form.dataset.sending;
        recorded(row, end);
      }, function (end) {
        delete form.dataset.sending;
        renew(form);
        row.hidden = false;
        say("Undone: nothing was recorded for " + form.dataset.subject + ".", true);
        var box = form.elements.namedItem("comment");
        if (box) { box.focus(); }
      });
      undo.focus();
      return answer;
    });
  }

  /* Held decisions the page was rendered with (after a reload, or a plain post). */
  function watchRendered(bar, onDone) {
    var forms = bar.parentNode.querySelector(".forms, .decision-forms");
    var token = csrf(bar);
    var undoForm = bar.querySelector("form.undo-held");
    var links = { undo: undoForm.action, release: bar.dataset.release };
    watchHeld(bar, links, Number(bar.dataset.seconds) || 0, token, function (answer) {
      if (!answer.ok && forms) { forms.hidden = false; }
      onDone(answer);
    }, function (answer) {
      if (forms) {
        forms.hidden = false;
        forms.querySelectorAll("form.decide").forEach(renew);
      }
      say(answer.message, true);
    });
  }

  document.querySelectorAll("ul.inbox .held[data-release]").forEach(function (bar) {
    var row = bar.closest("li.task");
    watchRendered(bar, function (answer) { recorded(row, answer); });
  });

  document.querySelectorAll("ul.inbox form.decide").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (form.dataset.sending) { return; }  /* a double click posts once */
      var fixed = form.querySelector("input[type=hidden][name=decision]");  /* handing on */
      var decision = fixed ? fixed.value : (event.submitter ? event.submitter.value : null);
      if (!decision) { return; }  /* an implicit submission (Enter) decides nothing */
      if (decision === "delegate") {
        form.dataset.sending = "1";
        setBusy(form, true);
        send(form, decision).then(function (answer) {
          delete form.dataset.sending;
          settle(form, answer);
          say(answer.message, answer.ok);
        });
        return;
      }
      if (reasonMissing(form, decision)) { refuse(form, decision); return; }
      clearRefusal(form);
      var go = asksFirst(form, decision) ? ask(form.dataset.question, label(form, "reject"), "reject")
        : Promise.resolve(true);
      go.then(function (yes) { if (yes) { hold(form, decision); } });
    });
  });

  function group(digits, indian) {
    if (digits.length <= 3) { return digits; }
    var head = digits.slice(0, -3), parts = [], size = indian ? 2 : 3;
    while (head) { parts.unshift(head.slice(-size)); head = head.slice(0, -size); }
    parts.push(digits.slice(-3));
    return parts.join(",");
  }

  /* As approvals.notifications.format.money_format writes it. */
  function money(minor, currency) {
    var p = moneyParts[currency] || { symbol: currency, exponent: 2, indian: false };
    var scale = Math.pow(10, p.exponent);
    var sign = minor < 0 ? "-" : "";
    var whole = Math.floor(Math.abs(minor) / scale);
    var figure = group(String(whole), p.indian);
    if (p.exponent) { figure += "." + String(Math.abs(minor) % scale).padStart(p.exponent, "0"); }
    if (!p.symbol) { return sign + figure; }
    return sign + p.symbol + (/^[A-Za-z]+$/.test(p.symbol) ? " " : "") + figure;
  }

  function bulkQuestion(forms) {
    var totals = {};
    forms.forEach(function (form) {
      var currency = form.dataset.currency;
      if (!currency || form.dataset.amount === "") { return; }
      totals[currency] = (totals[currency] || 0) + Number(form.dataset.amount);
    });
    var sums = Object.keys(totals).sort().map(function (c) { return money(totals[c], c); });
    var text = "Approve " + forms.length + " request" + (forms.length === 1 ? "" : "s");
    if (sums.length) { text += ", " + sums.join(" and ") + " in all"; }
    return text + "?";
  }

  var bulk = document.querySelector("[data-bulk]");
  if (bulk) {
    bulk.addEventListener("click", function () {
      var forms = [];
      document.querySelectorAll("li.task input.select:checked").forEach(function (box) {
        var form = box.closest("li.task").querySelector("form.decide");
        if (form && !form.dataset.sending && !form.closest("[hidden]")) { forms.push(form); }
      });
      if (!forms.length) { say("Tick the requests to approve first.", false); return; }
      ask(bulkQuestion(forms), "Approve " + forms.length, "approve primary").then(function (yes) {
        if (!yes) { return; }
        bulk.disabled = true;
        var done = 0, failed = [], seconds = 0;
        var chain = Promise.resolve();
        forms.forEach(function (form) {
          chain = chain.then(function () {
            return hold(form, "approve").then(function (answer) {
              if (answer.ok && answer.held) {
                done += 1;
                seconds = answer.seconds;
              } else {
                failed.push(answer.message);
              }
            });
          });
        });
        chain.then(function () {
          bulk.disabled = false;
          var text = "Approved " + done + " request" + (done === 1 ? "" : "s") + ".";
          if (done) { text += " Each is recorded in " + seconds + " seconds unless undone."; }
          if (failed.length) { text += " Not approved: " + failed.join(" "); }
          say(text, !failed.length);
        });
      });
    });
  }
})();
