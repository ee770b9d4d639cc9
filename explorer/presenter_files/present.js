// The presenter: one chapter clip at a time; it stops on its last frame until the next key press.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const chapters = data.index.chapters, S = data.strings;
  const video = document.getElementById("clip"), showCaptions = document.getElementById("show-captions");
  const fmt = (t, p) => t.replace(/\{(\w+)\}/g, (m, k) => (k in p ? p[k] : m));
  let current = -1;
  // a narrated lesson speaks: the clip plays with its sound (a silent one stays muted, so it may autoplay)
  video.muted = !data.index.narration;

  function stamp(t) {
    const ms = Math.round(t * 1000), h = Math.floor(ms / 3600000), m = Math.floor(ms / 60000) % 60;
    const s = Math.floor(ms / 1000) % 60, pad = (n, w) => String(n).padStart(w, "0");
    return pad(h, 2) + ":" + pad(m, 2) + ":" + pad(s, 2) + "." + pad(ms % 1000, 3);
  }
  function webvtt(captions) {
    return "WEBVTT\n\n" + captions.map(function (c, i) {
      return (i + 1) + "\n" + stamp(c.start) + " --> " + stamp(c.end) + "\n" + c.text.replace(/-->/g, "→") + "\n";
    }).join("\n");
  }
  // the chapter's captions as a WebVTT <track>: the browser shows them over the video, timed by the
  // clip itself. The cues travel inside the page (a page opened from file:// may not fetch a .vtt),
  // handed to the track as a blob.
  function setTrack(ch) {
    Array.from(video.querySelectorAll("track")).forEach(function (t) { URL.revokeObjectURL(t.src); t.remove(); });
    const track = document.createElement("track");
    track.kind = "captions";
    track.srclang = data.index.lang || "en";
    track.label = S.captions;
    track.default = true;
    track.src = URL.createObjectURL(new Blob([webvtt(ch.captions || [])], { type: "text/vtt" }));
    video.appendChild(track);
    track.track.mode = showCaptions.checked ? "showing" : "hidden";
  }

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
    video.src = ch.file.split("/").pop();
    setTrack(ch);
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
  showCaptions.addEventListener("change", function () {
    Array.from(video.textTracks).forEach(function (t) { t.mode = showCaptions.checked ? "showing" : "hidden"; });
  });
  video.addEventListener("ended", function () {
    document.body.dataset.ended = String(current + 1);
    document.getElementById("counter").textContent =
      fmt(S.chapter_of, { number: current + 1, count: chapters.length }) + " · " + S.ended;
  });
  video.addEventListener("error", function () { document.getElementById("status").textContent = S.missing; });
  document.addEventListener("keydown", function (e) {
    // typing in a text field is not a key for the presenter; a ticked checkbox keeps the keys working
    if (e.target && e.target.tagName === "INPUT" && e.target.type !== "checkbox") return;
    if (e.key === " " || e.key === "ArrowRight" || e.key === "PageDown") { e.preventDefault(); next(); }
    else if (e.key === "ArrowLeft" || e.key === "PageUp") { e.preventDefault(); previous(); }
    else if (e.key === "f" || e.key === "F") { e.preventDefault(); fullscreen(); }
  });
  document.getElementById("prev").addEventListener("click", previous);
  document.getElementById("next").addEventListener("click", function () { show(Math.min(current + 1, chapters.length - 1)); });
  document.getElementById("full").addEventListener("click", fullscreen);
  show(0);
})();
