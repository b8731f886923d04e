/* Approvals pages: the browser's time zone for the server, and inbox decisions without
   a reload. Plain forms keep working without this script. */
(function () {
  "use strict";
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

  var status = document.getElementById("inbox-status");
  if (!status) { return; }

  function say(text, ok) {
    status.hidden = false;
    status.className = "flash " + (ok ? "success" : "error");
    status.textContent = text;
  }

  function send(form, decision) {
    var body = new FormData(form);
    if (decision) { body.set("decision", decision); }
    return fetch(form.action, {
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

  function settle(form, answer) {
    var row = form.closest("li.task");
    if (answer.ok && row) {
      row.remove();
      if (!document.querySelector("li.task")) {
        var list = document.querySelector("ul.inbox");
        var empty = document.createElement("p");
        empty.className = "empty";
        empty.textContent = "Nothing else waits for you.";
        if (list) { list.replaceWith(empty); }
        var bulk = document.getElementById("bulk");
        if (bulk) { bulk.remove(); }
      }
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

  document.querySelectorAll("ul.inbox form.decide").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      if (form.dataset.sending) { return; }  /* a double click posts once */
      var decision = event.submitter ? event.submitter.value : null;
      form.dataset.sending = "1";
      setBusy(form, true);
      send(form, decision).then(function (answer) {
        delete form.dataset.sending;
        settle(form, answer);
        say(answer.message, answer.ok);
        var next = document.querySelector("li.task input.select, li.task button");
        if (answer.ok && next) { next.focus(); }
      });
    });
  });

  var bulk = document.querySelector("[data-bulk]");
  if (bulk) {
    bulk.addEventListener("click", function () {
      var forms = [];
      document.querySelectorAll("li.task input.select:checked").forEach(function (box) {
        var form = box.closest("li.task").querySelector("form.decide");
        if (form && !form.dataset.sending) { forms.push(form); }
      });
      if (!forms.length) { say("Tick the requests to approve first.", false); return; }
      bulk.disabled = true;
      var done = 0, failed = [];
      var chain = Promise.resolve();
      forms.forEach(function (form) {
        form.dataset.sending = "1";
        setBusy(form, true);
        chain = chain.then(function () {
          return send(form, "approve").then(function (answer) {
            delete form.dataset.sending;
            settle(form, answer);
            if (answer.ok) { done += 1; } else { failed.push(answer.message); }
          });
        });
      });
      chain.then(function () {
        bulk.disabled = false;
        var text = "Approved " + done + " request" + (done === 1 ? "" : "s") + ".";
        if (failed.length) { text += " Not approved: " + failed.join(" "); }
        say(text, !failed.length);
      });
    });
  }
})();
