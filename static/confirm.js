/* The one question asked before anything that cannot be taken back, in the page's
   dialog (templates/approvals/_confirm_dialog.html), with "Keep it" focused: the
   safe choice is the one Enter takes. A form with data-confirm (the question, which
   says what will happen) asks before it is sent, once its fields are filled in as
   it asks; the yes button says what the form's own button said. Without this
   script, the server asks on a page of its own (confirmed=yes). */
(function () {
  "use strict";

  var dialog = document.getElementById("confirm-decision");

  function ask(question, yesLabel, yesClass) {
    if (!dialog || typeof dialog.showModal !== "function") {
      return Promise.resolve(window.confirm(question));
    }
    var yes = dialog.querySelector("#confirm-yes");
    dialog.querySelector(".question").textContent = question;
    yes.textContent = yesLabel;
    yes.className = yesClass;
    dialog.returnValue = "";
    return new Promise(function (resolve) {
      dialog.addEventListener("close", function () {
        resolve(dialog.returnValue === "yes");
      }, { once: true });
      dialog.showModal();
      dialog.querySelector("#confirm-no").focus();
    });
  }
  window.approvalsAsk = ask;

  function put(form, name, value) {
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = name;
    input.value = value;
    form.appendChild(input);
  }

  /* A form the page does not write itself (the admin's change form) is named by a
     data-confirm-form note carrying the question. */
  document.querySelectorAll("[data-confirm-form]").forEach(function (note) {
    var form = document.getElementById(note.dataset.confirmForm);
    if (!form) { return; }
    form.dataset.confirm = note.dataset.confirm;
    if (note.dataset.confirmButtons) { form.dataset.confirmButtons = note.dataset.confirmButtons; }
  });

  /* data-confirm-buttons: only these buttons (by name) ask; a preview does not. */
  function asks(form, button) {
    var only = form.dataset.confirmButtons;
    if (!only) { return true; }
    return !!button && only.split(",").indexOf(button.name) !== -1;
  }

  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      var button = event.submitter;
      if (form.dataset.confirmed || !asks(form, button)) { return; }
      if (!form.checkValidity()) { return; }  /* the server says what is missing */
      event.preventDefault();
      var label = button ? (button.tagName === "INPUT" ? button.value : button.textContent.trim()) : "Confirm";
      ask(form.dataset.confirm, label, form.dataset.confirmClass || "reject").then(function (yes) {
        if (!yes) { return; }
        form.dataset.confirmed = "1";
        put(form, "confirmed", "yes");
        if (button && button.name) { put(form, button.name, button.value); }
        form.submit();
      });
    });
  });
})();
