// The presenter: one chapter clip at a time; it stops on its last frame until the next key press.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const chapters = data.index.chapters, S = data.strings;
  const video = document.getElementById("clip"), caption = document.getElementById("caption");
  const fmt = (t, p) => t.replace(/\{(\w+)\}/g, (m, k) => (k in p ? p[k] : m));
  let current = -1;

  document.getElementById("prev").textContent = S.previous;
  document.getElementById("next").textContent = S.next;
  document.getElementById("full").textContent = S.fullscreen;
  document.getElementById("captions-label").textContent = S.captions;
  document.getElementById("help").textContent = S.help;

  function show(i) {
    if (i < 0 || i >= chapters.length) return;
    current = i;
    const ch = chapters[i];
    document.getElementById("title").textContent = ch.title;
    document.getElementById("counter").textContent = fmt(S.chapter_of, { number: i + 1, count: chapters.length });
    document.body.dataset.chapter = String(i + 1);
    delete document.body.dataset.ended;
    caption.textContent = "";
    video.src = ch.file.split("/").pop();
    const p = video.play();
    if (p && p.catch) p.catch(function () { /* autoplay refused: the first key press plays it */ });
  }
  function next() {
    if (!video.ended && video.paused && video.currentTime === 0) { video.play(); return; }
    show(Math.min(current + 1, chapters.length - 1));
  }
  function previous() { show(Math.max(current - 1, 0)); }
  function fullscreen() {
    if (document.fullscreenElement) document.exitFullscreen();
    else document.documentElement.requestFullscreen().catch(function () {});
  }
  video.addEventListener("timeupdate", function () {
    if (!document.getElementById("show-captions").checked) { caption.textContent = ""; return; }
    const t = video.currentTime, caps = chapters[current].captions || [];
    const c = caps.find(function (c) { return c.start <= t && t < c.end; });
    caption.textContent = c ? c.text : "";
  });
  video.addEventListener("ended", function () {
    document.body.dataset.ended = String(current + 1);
    document.getElementById("counter").textContent =
      fmt(S.chapter_of, { number: current + 1, count: chapters.length }) + " · " + S.ended;
  });
  video.addEventListener("error", function () { caption.textContent = S.missing; });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "INPUT") return;
    if (e.key === " " || e.key === "ArrowRight" || e.key === "PageDown") { e.preventDefault(); next(); }
    else if (e.key === "ArrowLeft" || e.key === "PageUp") { e.preventDefault(); previous(); }
    else if (e.key === "f" || e.key === "F") { e.preventDefault(); fullscreen(); }
  });
  document.getElementById("prev").addEventListener("click", previous);
  document.getElementById("next").addEventListener("click", function () { show(Math.min(current + 1, chapters.length - 1)); });
  document.getElementById("full").addEventListener("click", fullscreen);
  show(0);
})();
