// Keyboard shortcuts of the review console. Every shortcut clicks or follows an element that works without
// this script too (data-shortcut="a", "1".."9", "r", "j n", "?"): the keys only save the mouse trip.
"use strict";

(function () {
  const help = document.getElementById("help");

  function typing(target) {
    return target instanceof HTMLElement &&
      (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function toggleHelp() {
    if (!help) return;
    if (help.open) help.close(); else help.showModal();
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (help && help.open) return;
    const focus = document.querySelector('[data-shortcut-focus~="' + CSS.escape(event.key) + '"]');
    if (focus) { event.preventDefault(); focus.focus(); return; }
    const target = document.querySelector('[data-shortcut~="' + CSS.escape(event.key) + '"]');
    if (!target) return;
    event.preventDefault();
    if (target.form) target.form.classList.add("busy");
    target.click();
  });

  document.querySelectorAll('[data-shortcut="?"]').forEach(function (button) {
    button.addEventListener("click", toggleHelp);
  });

  // One decision per page: a second key press or click while the first is on its way is ignored.
  document.querySelectorAll("form#decision").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (form.dataset.sent) { event.preventDefault(); return; }
      form.dataset.sent = "1";
      form.classList.add("busy");
    });
  });
})();
