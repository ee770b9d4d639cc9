// The explorer page: plain JS + SVG. Every number shown comes from the server's trace (/api/head).
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const SVG = "http://www.w3.org/2000/svg";
  const LANG_NAMES = { en: "English", ko: "한국어", pt: "Português" };
  const QUALITY_NAMES = { l: "480p15", m: "720p30", h: "1080p60" };
  const state = { model: "toy", sentence: "", layer: null, head: null, lang: "en", paper: false,
                  query: null, view: null, overview: null, info: null, strings: {}, config: null, job: null };

  // --- words -----------------------------------------------------------------------------------
  function t(key, params) {
    let tpl = state.strings[key];
    if (tpl === undefined) return key;
    if (typeof tpl === "object") {  // a table of CLDR plural forms, chosen by params.count
      const form = new Intl.PluralRules(state.lang).select(Number(params && params.count));
      tpl = tpl[form] !== undefined ? tpl[form] : tpl.other;
    }
    return String(tpl).replace(/\{(\w+)\}/g, (m, k) => (params && k in params ? params[k] : m));
  }
  function applyStrings() {
    document.documentElement.lang = state.lang;
    document.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
    document.title = t("title");
  }
  const num = (x, d) => (x === null || x === undefined ? "" : Number(x).toFixed(d === undefined ? 4 : d));

  // --- requests ----------------------------------------------------------------------------------
  async function api(path, options) {
    const r = await fetch(path, options);
    const body = await r.json().catch(() => ({ error: { message: r.statusText, hint: "" } }));
    if (!r.ok) { const e = new Error("api"); e.body = body.error || {}; throw e; }
    return body;
  }
  function query(params) {
    // every request names the page's language: the server's errors come back in it
    params = Object.assign({ lang: state.lang }, params);
    return Object.entries(params).filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
  }
  function showError(err) {
    const b = err && err.body ? err.body : { message: String(err), hint: "" };
    $("error").hidden = false;
    $("error-message").textContent = b.message || "";
    $("error-hint").textContent = b.hint || "";
    $("error-hint-line").hidden = !b.hint;
    $("vocab-link").hidden = !(b.unknown_words && b.unknown_words.length);
  }
  function clearError() { $("error").hidden = true; $("vocab").hidden = true; }

  // --- pickers -----------------------------------------------------------------------------------
  function fill(select, values, label, current) {
    select.innerHTML = "";
    values.forEach((v) => {
      const o = document.createElement("option");
      o.value = String(v); o.textContent = label ? label(v) : String(v);
      if (String(v) === String(current)) o.selected = true;
      select.appendChild(o);
    });
  }
  function range(n) { return Array.from({ length: n }, (_, i) => i); }
  async function loadModel() {
    state.info = await api("/api/model?" + query({ model: state.model }));
    fill($("layer"), range(state.info.n_layers), null, state.layer);
    fill($("head"), range(state.info.n_heads), null, state.head);
  }

  // --- the pattern -------------------------------------------------------------------------------
  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function drawPattern() {
    const v = state.view, h = v.pattern_head, toks = v.tokens, n = toks.length;
    const svg = $("pattern");
    svg.innerHTML = "";
    const cell = Math.max(22, Math.min(56, Math.floor(560 / n)));
    const labelW = 14 + 8.5 * Math.max(...toks.map((s) => s.length)), top = labelW + 18, left = labelW + 24;
    const W = left + n * cell + 8, H = top + n * cell + 8;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    svg.setAttribute("width", W); svg.setAttribute("height", H);
    svg.setAttribute("aria-label", t("pattern_heading", { layer: v.layer, head: v.head }));
    // video layout: keys are rows, queries are columns; paper layout: queries are rows
    const paper = state.paper;
    const colTok = paper ? "key" : "query", rowTok = paper ? "query" : "key";
    el("text", { x: left, y: 12, class: "axis" }, svg).textContent = t(paper ? "keys_axis" : "queries_axis");
    const yAxis = el("text", { x: 12, y: top + n * cell, class: "axis", transform: `rotate(-90 12 ${top + n * cell})` }, svg);
    yAxis.textContent = t(paper ? "queries_axis" : "keys_axis");
    for (let i = 0; i < n; i++) {
      const cx = left + i * cell + cell / 2;
      const col = el("text", { x: cx, y: top - 6, class: colTok + (paper ? "" : " column-pick"),
                               transform: `rotate(-60 ${cx} ${top - 6})` }, svg);
      col.textContent = toks[i];
      if (!paper) col.addEventListener("click", () => pickQuery(i));
      const row = el("text", { x: left - 6, y: top + i * cell + cell / 2 + 5, "text-anchor": "end",
                               class: rowTok + (paper ? " column-pick" : "") }, svg);
      row.textContent = toks[i];
      if (paper) row.addEventListener("click", () => pickQuery(i));
    }
    if (state.query !== null) {
      const qi = state.query;
      el("rect", paper ? { x: left, y: top + qi * cell, width: n * cell, height: cell, class: "picked" }
                       : { x: left + qi * cell, y: top, width: cell, height: n * cell, class: "picked" }, svg);
    }
    for (let r = 0; r < n; r++) {
      for (let c = 0; c < n; c++) {
        const q = paper ? r : c, k = paper ? c : r;
        const masked = !!h.mask[q][k], w = h.pattern[q][k];
        const g = el("g", { class: "cell" + (masked ? " masked" : ""), tabindex: "0", role: "img",
                            "data-q": q, "data-k": k, "data-row": r, "data-col": c,
                            "data-weight": masked ? 0 : w }, svg);
        const label = masked ? t("cell_masked", { query: toks[q], key: toks[k] })
                             : t("cell", { query: toks[q], key: toks[k], weight: num(w) });
        g.setAttribute("aria-label", label);
        el("title", {}, g).textContent = label;
        el("rect", { x: left + c * cell + 1, y: top + r * cell + 1, width: cell - 2, height: cell - 2 }, g);
        if (!masked && w > 0.002) {
          el("circle", { cx: left + c * cell + cell / 2, cy: top + r * cell + cell / 2,
                         r: (0.45 * Math.sqrt(w) * cell).toFixed(2) }, g);
        }
        g.addEventListener("mouseenter", () => showCell(q, k));
        g.addEventListener("focus", () => showCell(q, k));
        g.addEventListener("click", () => pickQuery(q));
        g.addEventListener("keydown", (e) => moveFocus(e, r, c, n));
      }
    }
  }
  function moveFocus(e, r, c, n) {
    const d = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); e.currentTarget.dispatchEvent(new Event("click")); return; }
    if (!d) return;
    e.preventDefault();
    const rr = Math.min(n - 1, Math.max(0, r + d[0])), cc = Math.min(n - 1, Math.max(0, c + d[1]));
    const next = document.querySelector(`#pattern .cell[data-row="${rr}"][data-col="${cc}"]`);
    if (next) next.focus();
  }
  function showCell(q, k) {
    const v = state.view, h = v.pattern_head, masked = !!h.mask[q][k];
    $("detail-hint").hidden = true;
    $("detail-body").hidden = false;
    $("detail-pair").textContent = t("detail_pair", { query: v.tokens[q], key: v.tokens[k] });
    $("detail-qk").textContent = num(h.qk[q][k]);
    $("detail-score").textContent = num(h.scores[q][k]);
    $("detail-weight").textContent = masked ? num(0) : num(h.pattern[q][k]);
    $("detail-masked").hidden = !masked;
  }
  function pickQuery(q) {
    state.query = q;
    drawPattern();
    drawArcs();
  }

  // --- arcs over the words -------------------------------------------------------------------------
  function drawArcs() {
    const v = state.view, toks = v.tokens, n = toks.length, h = v.pattern_head;
    const q = state.query === null ? n - 1 : state.query;
    $("arcs-heading").textContent = t("arcs_heading", { query: toks[q] });
    const svg = $("arcs");
    svg.innerHTML = "";
    const widths = toks.map((s) => 10 + 9 * s.length);
    const xs = []; let x = 8;
    widths.forEach((w) => { xs.push(x + w / 2); x += w + 6; });
    const W = Math.max(x, 200), base = 118, H = base + 12;
    svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
    for (let k = 0; k < n; k++) {
      const w = h.mask[q][k] ? 0 : h.pattern[q][k];
      if (k === q || w < 0.01) continue;
      const x0 = xs[q], x1 = xs[k], lift = Math.min(100, 18 + Math.abs(x1 - x0) * 0.35);
      el("path", { d: `M ${x0} ${base - 18} C ${x0} ${base - 18 - lift}, ${x1} ${base - 18 - lift}, ${x1} ${base - 18}`,
                   "stroke-width": (0.6 + 7 * w).toFixed(2), "stroke-opacity": (0.25 + 0.75 * w).toFixed(2) }, svg)
        .appendChild(document.createElementNS(SVG, "title")).textContent =
          t("cell", { query: toks[q], key: toks[k], weight: num(w) });
    }
    toks.forEach((s, i) => {
      const w = el("text", { x: xs[i], y: base, "text-anchor": "middle", class: "word" + (i === q ? " query" : ""),
                             tabindex: "0", role: "button" }, svg);
      w.textContent = s;
      w.addEventListener("click", () => pickQuery(i));
      w.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pickQuery(i); } });
    });
  }

  // --- next token ------------------------------------------------------------------------------
  function drawNext() {
    const ol = $("next");
    ol.innerHTML = "";
    const top = state.view.next_token.slice(0, 8), max = Math.max(...top.map((x) => x.p), 1e-9);
    top.forEach((x) => {
      const li = document.createElement("li");
      li.innerHTML = '<span class="tok"></span><span><span class="bar"></span></span><span class="p"></span>';
      li.querySelector(".tok").textContent = x.token;
      li.querySelector(".bar").style.width = (100 * x.p / max).toFixed(1) + "%";
      li.querySelector(".bar").style.display = "block";
      li.querySelector(".p").textContent = (100 * x.p).toFixed(1) + "%";
      ol.appendChild(li);
    });
  }

  // --- model view ----------------------------------------------------------------------------------
  function drawOverview() {
    const o = state.overview, box = $("heads");
    if (!o) return;
    box.innerHTML = "";
    box.style.gridTemplateColumns = `repeat(${o.n_heads}, minmax(0, 96px))`;
    o.heads.forEach((layer) => layer.forEach((hd) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "head-thumb" + (hd.layer === state.layer && hd.head === state.head ? " current" : "");
      b.dataset.layer = hd.layer; b.dataset.head = hd.head;
      const label = t("head_thumb", { layer: hd.layer, head: hd.head });
      b.setAttribute("aria-label", label);
      b.title = label;
      const n = hd.pattern.length, s = Math.max(2, Math.floor(96 / n));
      const cv = document.createElement("canvas");
      cv.width = cv.height = n * s;
      const g = cv.getContext("2d");
      g.fillStyle = "#000"; g.fillRect(0, 0, n * s, n * s);
      for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) {
        const w = hd.pattern[q][k];
        if (w <= 0) continue;
        g.fillStyle = `rgba(255,255,255,${Math.min(1, 0.08 + w).toFixed(3)})`;
        if (state.paper) g.fillRect(k * s, q * s, s, s); else g.fillRect(q * s, k * s, s, s);
      }
      b.appendChild(cv);
      const cap = document.createElement("span");
      cap.textContent = `${hd.layer}·${hd.head}`;
      b.appendChild(cap);
      b.addEventListener("click", () => {
        state.layer = hd.layer; state.head = hd.head;
        $("layer").value = String(hd.layer); $("head").value = String(hd.head);
        showHead().then(() => $("pattern-view").scrollIntoView({ block: "nearest" }));
      });
      box.appendChild(b);
    }));
  }

  // --- loading -------------------------------------------------------------------------------------
  let seq = 0;
  async function showHead() {
    const my = ++seq;
    const view = await api("/api/head?" + query({ model: state.model, sentence: state.sentence,
                                                  layer: state.layer, head: state.head, lang: state.lang }));
    if (my !== seq) return;
    if (!state.view || state.view.text !== view.text) state.query = null;
    state.view = view;
    state.layer = view.layer; state.head = view.head;
    $("layer").value = String(view.layer); $("head").value = String(view.head);
    $("pattern-heading").textContent = t("pattern_heading", { layer: view.layer, head: view.head });
    $("role").textContent = view.role_label || "";
    $("head-note").textContent = view.head_note || "";
    $("head-note").hidden = !view.head_note;
    $("detail-score-label").textContent = t("detail_score", { d_head: view.d_head });
    $("detail-hint").hidden = false; $("detail-body").hidden = true;
    document.body.dataset.layer = view.layer; document.body.dataset.head = view.head;
    drawPattern(); drawArcs(); drawNext();
    document.querySelectorAll("#heads button").forEach((b) => {
      b.classList.toggle("current", +b.dataset.layer === view.layer && +b.dataset.head === view.head);
    });
  }
  async function showAll() {
    clearError();
    $("busy").hidden = false;
    try {
      await showHead();
      state.overview = await api("/api/overview?" + query({ model: state.model, sentence: state.sentence }));
      drawOverview();
      await loadScenes();
      document.body.dataset.ready = String(Date.now());
    } catch (e) {
      showError(e);
      document.body.dataset.ready = "error";
    } finally {
      $("busy").hidden = true;
    }
  }
  async function loadScenes() {
    const r = await api("/api/scenes?" + query({ model: state.model, sentence: state.sentence, layer: state.layer,
                                                 head: state.head, lang: state.lang }));
    const fits = r.scenes.filter((s) => s.fits), sel = $("scene"), keep = sel.value;
    sel.innerHTML = "";
    fits.forEach((s) => {
      const o = document.createElement("option");
      o.value = s.name; o.textContent = `${s.name} — ${s.description}`;
      sel.appendChild(o);
    });
    if (fits.some((s) => s.name === keep)) sel.value = keep;
    $("no-scene").hidden = fits.length > 0;
    $("render").disabled = fits.length === 0;
  }
  async function showVocab() {
    const v = await api("/api/vocab?" + query({ model: state.model }));
    const box = $("vocab-words");
    box.innerHTML = "";
    $("vocab-heading").textContent = t("vocab_heading", { count: v.size });
    if (v.real) {
      box.textContent = t("vocab_real", { count: v.size });
    } else {
      Object.entries(v.groups).forEach(([group, words]) => {
        const h = document.createElement("h4"); h.textContent = group; box.appendChild(h);
        const p = document.createElement("p"); p.textContent = words.join(" "); box.appendChild(p);
      });
    }
    $("vocab").hidden = false;
    $("vocab").scrollIntoView({ block: "nearest" });
  }

  // --- render queue ----------------------------------------------------------------------------------
  function jobLine(j) {
    const li = document.createElement("li");
    li.dataset.job = j.id; li.dataset.state = j.state;
    const key = { queued: "queued", planning: "planning", rendering: "rendering", done: "done", error: "failed",
                  cancelled: "cancelled" }[j.state];
    const span = document.createElement("span");
    span.textContent = t(key, { scene: j.scene, position: j.position || 1, chapter: Math.max(1, j.chapter),
                                count: Math.max(1, j.n_chapters), written: num(j.written, 1) });
    li.appendChild(span);
    if (j.state === "rendering" || j.state === "planning") {
      const p = document.createElement("progress");
      if (j.n_chapters > 1) { p.max = 1; p.value = j.progress; }
      li.appendChild(p);
    }
    if (j.state === "queued" || j.state === "rendering" || j.state === "planning") {
      const stop = document.createElement("button");
      stop.type = "button"; stop.className = "cancel"; stop.textContent = t("cancel");
      stop.addEventListener("click", () => api("/api/render/" + encodeURIComponent(j.id), { method: "DELETE" })
        .then(pollQueue).catch(showError));
      li.appendChild(stop);
    }
    if (j.error) {
      const e = document.createElement("div");
      e.className = "error";
      e.textContent = j.error.message + (j.error.hint ? " — " + t("hint") + ": " + j.error.hint : "");
      li.appendChild(e);
    }
    return li;
  }
  async function pollQueue() {
    const q = await api("/api/queue");
    const ul = $("queue");
    ul.innerHTML = "";
    const lines = [q.current, ...q.waiting, ...q.done].filter(Boolean);
    if (q.lost_at_start) {
      const li = document.createElement("li");
      li.className = "lost";
      li.textContent = t("lost_at_start", { count: q.lost_at_start });
      ul.appendChild(li);
    }
    if (!lines.length) { const li = document.createElement("li"); li.textContent = t("queue_empty"); ul.appendChild(li); }
    lines.forEach((j) => ul.appendChild(jobLine(j)));
    return q;
  }
  async function pollJob(id) {
    const j = await api("/api/render/" + encodeURIComponent(id));
    await pollQueue();
    if (j.state === "done") return showResult(j);
    if (j.state === "error" || j.state === "cancelled") return;
    setTimeout(() => pollJob(id).catch(showError), 700);
  }
  function showResult(j) {
    const clip = j.files.find((f) => f.kind === "clip");
    $("result").hidden = false;
    const player = $("player");
    const gif = j.format === "gif";
    player.hidden = !clip || gif;
    $("gif").hidden = !clip || !gif;
    if (clip && !gif) {
      player.src = clip.url;
      // the clip's captions as a WebVTT <track> the browser shows over the video
      Array.from(player.querySelectorAll("track")).forEach((tr) => tr.remove());
      const vtt = j.files.find((f) => f.kind === "vtt");
      if (vtt) {
        const tr = document.createElement("track");
        tr.kind = "captions"; tr.src = vtt.url; tr.srclang = j.lang; tr.label = t("captions_track"); tr.default = true;
        player.appendChild(tr);
      }
    }
    if (clip && gif) { $("gif").src = clip.url; $("gif").alt = j.scene; }
    const ul = $("files");
    ul.innerHTML = "";
    j.files.forEach((f) => {
      const li = document.createElement("li"), a = document.createElement("a");
      a.href = f.url;
      if (f.kind === "presenter") { a.target = "_blank"; a.textContent = t("presenter_link"); }
      else {
        a.download = f.name.split("/").pop();
        a.textContent = { clip: t("file_clip"), srt: t("file_srt"), vtt: t("file_vtt"), index: t("file_index") }[f.kind]
          || t("file_chapter", { name: f.name.split("/").pop() });
      }
      li.appendChild(a); ul.appendChild(li);
    });
  }
  async function startRender(ev) {
    ev.preventDefault();
    clearError();
    try {
      const j = await api("/api/render", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ scene: $("scene").value, model: state.model, sentence: state.sentence,
                               layer: state.layer, head: state.head, quality: $("quality").value,
                               lang: state.lang, format: $("format").value,
                               layout: state.paper ? "paper" : "video",
                               voice: $("narrate").checked ? "auto" : null }) });
      state.job = j.id;
      pollJob(j.id).catch(showError);
    } catch (e) { showError(e); }
  }

  // --- wiring ------------------------------------------------------------------------------------
  async function setLang(lang) {
    state.lang = lang;
    state.strings = await api("/api/strings?" + query({ lang }));
    applyStrings();
    updateNarrate();
  }
  // "narrate" asks for the best offline voice of the clip's language; off where none is installed
  function updateNarrate() {
    const box = $("narrate");
    if (!box || !state.config) return;
    const ok = !!(state.config.voices || {})[state.lang];
    box.disabled = !ok;
    if (!ok) box.checked = false;
    box.title = ok ? "" : t("narrate_missing");
  }
  async function init() {
    state.config = await api("/api/config");
    const params = new URLSearchParams(location.search);
    state.lang = state.config.languages.includes(params.get("lang")) ? params.get("lang") : "en";
    fill($("model"), state.config.models, null, state.model);
    fill($("lang"), state.config.languages, (l) => LANG_NAMES[l] || l, state.lang);
    fill($("quality"), state.config.qualities, (q) => `${q} (${QUALITY_NAMES[q] || q})`, "l");
    fill($("format"), state.config.formats, null, "mp4");
    updateNarrate();
    $("sentence").maxLength = state.config.max_chars;
    await setLang(state.lang);
    await loadModel();
    state.sentence = params.get("sentence") || state.info.example;
    $("sentence").value = state.sentence;
    await showAll();
    pollQueue().catch(() => {});
  }
  $("controls").addEventListener("submit", (e) => {
    e.preventDefault();
    state.sentence = $("sentence").value;
    showAll();
  });
  $("model").addEventListener("change", async () => {
    state.model = $("model").value; state.layer = null; state.head = null;
    try { await loadModel(); } catch (e) { showError(e); return; }
    if (!$("sentence").value.trim()) $("sentence").value = state.info.example;
    state.sentence = $("sentence").value;
    showAll();
  });
  $("layer").addEventListener("change", () => { state.layer = +$("layer").value; showHead().then(loadScenes).catch(showError); });
  $("head").addEventListener("change", () => { state.head = +$("head").value; showHead().then(loadScenes).catch(showError); });
  $("lang").addEventListener("change", async () => {
    await setLang($("lang").value);
    if (state.view) { showHead().then(loadScenes).catch(showError); drawOverview(); pollQueue().catch(() => {}); }
  });
  $("paper").addEventListener("change", () => {
    state.paper = $("paper").checked;
    if (state.view) { drawPattern(); drawOverview(); }
  });
  $("vocab-link").addEventListener("click", () => showVocab().catch(showError));
  $("render-form").addEventListener("submit", startRender);
  init().catch(showError);
  // renders started elsewhere (another tab, another person) show up in the queue too
  setInterval(() => { if (!document.hidden) pollQueue().catch(() => {}); }, 4000);
})();
