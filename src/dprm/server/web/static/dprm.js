/* dprm web pages: their one script of their own, beside htmx. Every page works without it.

   The one-time key of the job form and of the statistics form survives the back button. Each
   form carries its key in a hidden field ("submission", what the server reads) and again in a
   text field the page renders empty and hidden ("submission_kept", marked
   data-keeps="submission"), which this script fills with the key the form is sent with
   ("Run the job", "Get the statistics": the buttons with value "run"; not a dry run). A browser
   that returns to the page with the back button (or the forward button) asks for it again (the
   pages are not cached) and puts back what the script or the user had typed in its text fields,
   not the hidden ones: the page shown again then finds the key its form was sent with, and this
   script puts it back in "submission". The form sent again with the same values returns the job
   it started, or the statistics' first answer, charged once; another value is a new request (the
   server's key is the form's key and its values), and so is a new visit of the page (a link, a
   reload: nothing is put back). The note marked data-sent-note says so.

   The statistics form is sent by HTMX and stays on the page: its answer puts a new key in
   "submission" (for a new request), and the text field keeps the key of the last post until the
   form is sent again. */
(function () {
  "use strict";

  function restore(root) {
    if (!root || !root.querySelectorAll) {
      return;
    }
    root.querySelectorAll("input[data-keeps]").forEach(function (kept) {
      var form = kept.form;
      var field = form ? form.elements.namedItem(kept.getAttribute("data-keeps")) : null;
      if (field && kept.value && kept.value !== field.value) { // put back by the browser: the form was sent
        field.value = kept.value;
        var note = form.querySelector("[data-sent-note]");
        if (note) {
          note.hidden = false;
        }
      }
    });
  }

  function sent(event) {
    var form = event.target;
    var button = event.submitter;
    if (!form || !form.querySelectorAll || !button || button.value !== "run") {
      return;
    }
    form.querySelectorAll("input[data-keeps]").forEach(function (kept) {
      var field = form.elements.namedItem(kept.getAttribute("data-keeps"));
      if (field) {
        kept.value = field.value;
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { restore(document); });
  } else {
    restore(document);
  }
  document.addEventListener("submit", sent, true); // before HTMX reads the form or the browser leaves the page
  document.addEventListener("htmx:load", function (event) { restore(event.target); }); // a form swapped in
})();
