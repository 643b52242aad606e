/* The language switch (book/_ext/zhlang.py adds the button to every page of both editions).
   The English and the Chinese page have the same headings in the same order (scripts/zh.py check fails otherwise), so
   a section is named by its index: the switch goes to "#book-sec-N" of the other page, whose copy of this script
   scrolls to its N-th section (again once figures and images have loaded) and puts that section's id in the address. */
function bookLang(url, sameSection) {
  var n = 0;
  if (sameSection) {
    var secs = document.querySelectorAll("article.bd-article section");
    var line = Math.max(120, window.innerHeight / 3);   // the section whose heading is above this line is "here"
    for (var i = 0; i < secs.length; i++) {             // document order = top-to-bottom order
      var r = secs[i].getBoundingClientRect();
      if (r.height === 0) continue;                     // a hidden section
      if (r.top <= line) n = i; else break;
    }
  }
  window.location.href = url + (n > 0 ? "#book-sec-" + n : "");
}

(function () {
  var m = /^#book-sec-(\d+)$/.exec(window.location.hash);
  if (!m) return;
  var target = +m[1], moved = false;
  function go() {
    var s = document.querySelectorAll("article.bd-article section")[target];
    if (!s || moved) return;
    if (s.id && window.history.replaceState) window.history.replaceState(null, "", "#" + s.id);
    s.scrollIntoView();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", go); else go();
  window.addEventListener("load", function () { setTimeout(go, 0); });
  window.addEventListener("wheel", function () { moved = true; }, { once: true, passive: true });
  window.addEventListener("keydown", function () { moved = true; }, { once: true });
})();
