/* dprm web pages: their one script of their own, beside htmx. Every page works without it.

   The job form's one-time key survives the back button. The form carries its key in a hidden
   field ("submission", what the server reads) and again in a text field the page renders empty
   and hidden ("submission_kept", marked data-keeps="submission"), which this script fills with
   the key. A browser that returns to the page with the back button asks for it again (the pages
   are not cached) and puts back what the script or the user had typed in its text fields, not
   the hidden ones: the page shown again then finds the key its form was sent with, and this
   script puts it back in "submission". "Run the job" with the same values returns the job it
   started, charged once; another value makes a new job (the server's key of a job is the form's
   key and its values), and so does a new visit of the page (a link, a reload: nothing is put
   back). The note marked data-sent-note says so. */
(function () {
  "use strict";

  function keep(root) {
    if (!root || !root.querySelectorAll) {
      return;
    }
    root.querySelectorAll("input[data-keeps]").forEach(function (kept) {
      var form = kept.form;
      var field = form ? form.elements.namedItem(kept.getAttribute("data-keeps")) : null;
      if (!field) {
        return;
      }
      if (kept.value && kept.value !== field.value) { // put back by the browser: the form was sent
        field.value = kept.value;
        var note = form.querySelector("[data-sent-note]");
        if (note) {
          note.hidden = false;
        }
      } else {
        kept.value = field.value;
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { keep(document); });
  } else {
    keep(document);
  }
  document.addEventListener("htmx:load", function (event) { keep(event.target); }); // a form swapped in
})();
