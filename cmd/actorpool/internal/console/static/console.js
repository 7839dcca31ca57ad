// Refreshes the live part of the actors page: a fetch of the same page's
// live part from the console itself, put in place of the old one.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) return;
  var every = Number(live.dataset.every) || 2000;
  function tick() {
    fetch(live.dataset.src, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { live.innerHTML = html; live.dataset.refreshed = String(Date.now()); })
      .catch(function () {})
      .finally(function () { setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
