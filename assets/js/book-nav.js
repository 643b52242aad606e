// The sidebar buttons on every width (issue 29). The page carries two "Site navigation" buttons (.primary-toggle)
// and two "On this page" buttons (.secondary-toggle): pydata-sphinx-theme's, hidden by sphinx-book-theme, and the
// book theme's, which readers see. Both themes attach their click handlers to the FIRST of each pair
// (document.querySelector), so the visible button did nothing: no table of contents on phones and tablets, no
// collapse on desktop (pydata-sphinx-theme #2451 with sphinx-book-theme 1.3.0). A click on any other button of the
// pair is handed to the first: below 992 px pydata's handler opens the sidebar as a dialog, from 992 px the book
// theme's collapses or restores the sidebar.
(function () {
  function forward() {
    ["primary", "secondary"].forEach(function (kind) {
      var buttons = document.querySelectorAll("." + kind + "-toggle");
      for (var i = 1; i < buttons.length; i++) {
        buttons[i].addEventListener("click", function (event) {
          event.preventDefault();
          event.stopImmediatePropagation();
          buttons[0].click();
        }, true);
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", forward);
  } else {
    forward();
  }
})();
