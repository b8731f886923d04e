// The new-request form's "Who will approve this": as the person fills in the form, ask
// the server for the route the request would take (nothing is written) and show it in
// words. Without this script the form works as before and the box stays hidden.
(function () {
  "use strict";
  var form = document.querySelector("form[data-route]");
  if (!form) { return; }
  var box = document.getElementById("route-preview");
  var words = box && box.querySelector(".route");
  if (!box || !words) { return; }
  var skip = { csrfmiddlewaretoken: true, idempotency_key: true, intent: true };
  var timer = null;
  var asked = 0;

  function query() {
    var params = new URLSearchParams();
    new FormData(form).forEach(function (value, name) {
      if (!skip[name] && typeof value === "string") { params.append(name, value); }
    });
    return params.toString();
  }

  function ask() {
    var mine = ++asked;
    fetch(form.getAttribute("data-route") + "&" + query(), {
      credentials: "same-origin",
      headers: { "Accept": "application/json" }
    }).then(function (response) {
      return response.ok ? response.json() : null;
    }).then(function (answer) {
      if (mine !== asked || !answer || !answer.route) { return; }
      words.textContent = answer.route;
      box.hidden = false;
    }).catch(function () { /* the preview is a help, never in the way */ });
  }

  function soon() {
    window.clearTimeout(timer);
    timer = window.setTimeout(ask, 350);
  }

  form.addEventListener("input", soon);
  form.addEventListener("change", soon);
  ask();
})();
