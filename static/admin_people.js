// A person named by typing in the admin (offboarding, reassign, add an approver, a
// step card's approver):
// suggestions come from the page's own search (at most ten people, never the whole
// organisation) into the field's datalist. Without script the name typed is what the
// server looks up, and it says in words when nobody or several people match.
(function () {
  "use strict";

  function suggest(input) {
    var list = document.getElementById(input.getAttribute("list"));
    var timer = null, asked = "";
    if (!list) return;
    input.addEventListener("input", function () {
      var text = input.value.trim();
      clearTimeout(timer);
      if (!text || text === asked) return;
      timer = setTimeout(function () {
        asked = text;
        var url = input.getAttribute("data-people");
        url += (url.indexOf("?") < 0 ? "?" : "&") + "q=" + encodeURIComponent(text);
        fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
          .then(function (r) { return r.ok ? r.json() : { people: [] }; })
          .then(function (answer) {
            // options the page wrote itself (data-fixed: the manager, the groups) stay
            var fixed = Array.prototype.filter.call(list.children, function (o) {
              return o.hasAttribute("data-fixed");
            });
            list.replaceChildren.apply(list, fixed.concat(answer.people.map(function (p) {
              var option = document.createElement("option");
              option.value = p.username;
              option.label = p.label;
              return option;
            })));
          }, function () { /* no suggestions; the name typed still counts */ });
      }, 150);
    });
  }

  function start() { document.querySelectorAll("input[data-people]").forEach(suggest); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
