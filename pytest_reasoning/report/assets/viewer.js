// The report's sample viewer: every sample, filters, search, one sample's detail, candidate
// beside baseline. Data comes in chunks (one per suite entry and level): the samples' list as
// JSON, their texts as base64 raw-DEFLATE JSON; inline in the page or in data/<key>.js files
// loaded by script tags (file:// forbids fetch); nothing is ever requested from the network.
// Inline, the first draw needs no macrotask (no inflating, no loading), so it is done before
// the browser parses the rest of the page. Model text reaches the page only through
// textContent, with control characters shown as symbols.
(() => {
  "use strict";
  const M = JSON.parse(document.getElementById("pr-manifest").textContent);
  const PAGE = 100;
  const PAIR_PAGE = 20;
  const FILTERS = ["model", "suite", "task", "level", "outcome", "mode"];
  const HASH_KEYS = ["view", ...FILTERS, "kind", "q", "sort", "sample"];
  const state = { view: "samples", model: "", suite: "", task: "", level: "", outcome: "",
    mode: "", kind: "", q: "", sort: "", sample: "", page: 0 };
  const meta = new Map(); // chunk key → {samples, pairs}
  const text = new Map(); // chunk key → {prompts, replies, reasoning}
  const loading = new Map(); // blob key → Promise
  let generation = 0; // renders so far: tests wait for it to move
  let land = false; // a link opened a view: bring its first sample into sight once drawn
  let current = []; // the samples listed now, in order (j / k step through them)

  const $ = (id) => document.getElementById(id);
  // Every text the page shows goes through shown() here (texts, titles, string children):
  // model names, answers and errors come from results files anyone can write.
  const el = (tag, attrs, ...children) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "text") e.textContent = shown(v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : k === "title" ? shown(v) : String(v));
    }
    for (const c of children) {
      if (c !== null && c !== undefined) e.append(typeof c === "string" ? shown(c) : c);
    }
    return e;
  };
  const say = (id, text) => { $(id).textContent = shown(text); };
  // Control characters (NUL, ANSI escapes, C1) and bidi controls (U+202E would reverse
  // what follows: an answer that reads as another) as visible symbols, as errors.printable
  // shows them: never raw in the page.
  const shown = (s) => s === null || s === undefined ? "" : String(s).replace(
    /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => {
      const n = c.charCodeAt(0);
      if (n < 0x20) return String.fromCharCode(0x2400 + n);
      if (n === 0x7f) return "\u2421";
      const hex = n.toString(16);
      return n <= 0x9f ? "\\x" + hex : "\\u" + hex.padStart(4, "0");
    });
  const num = (x, digits) => x === null || x === undefined ? "-" : Number(x).toFixed(digits);
  const count = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const plural = (n, word) => `${count(n)} ${word}${n === 1 ? "" : "s"}`;

  // -- data ----------------------------------------------------------------------------------
  const parsed = new Promise((resolve) => {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("DOMContentLoaded", resolve);
  });
  async function blob(key) {
    // Inline texts follow this script in the page: it starts before they are parsed.
    if (M.inline && !$("pr-" + key)) await parsed;
    const inline = $("pr-" + key);
    if (inline) return inline.textContent;
    if (!loading.has(key)) {
      loading.set(key, new Promise((resolve, reject) => {
        const s = document.createElement("script");
        s.src = `${M.dir}/${key}.js`;
        s.onload = () => {
          const data = (window.PR_DATA || {})[key];
          if (data === undefined) reject(new Error(`${s.src} holds no ${key}`));
          else { delete window.PR_DATA[key]; resolve(data); }
        };
        s.onerror = () => reject(new Error(`cannot load ${s.src} (kept beside index.html?)`));
        document.head.append(s);
      }));
    }
    return loading.get(key);
  }
  async function inflate(b64) {
    let bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(b64);
    else {
      const bin = atob(b64);
      bytes = new Uint8Array(bin.length);
      for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    }
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
    return JSON.parse(await new Response(stream).text());
  }
  async function loadMeta(chunk) {
    if (!meta.has(chunk.key)) {
      const data = JSON.parse(await blob(chunk.key + "m"));
      data.samples.forEach((s, i) => { s.chunk = chunk.key; s.pos = i; });
      meta.set(chunk.key, data);
    }
    return meta.get(chunk.key);
  }
  async function loadText(key) {
    if (!text.has(key)) text.set(key, await inflate(await blob(key + "t")));
    return text.get(key);
  }
  const chunkOf = new Map(M.chunks.map((c) => [c.key, c]));

  // -- filters -------------------------------------------------------------------------------
  function chunkMatches(c) {
    return (!state.model || c.models.includes(state.model)) &&
      (!state.suite || c.suites.includes(state.suite)) &&
      (!state.task || c.task === state.task) && (!state.level || c.level === state.level);
  }
  function sampleMatches(s) {
    if (state.model && s.model !== state.model) return false;
    if (state.suite && s.suite !== state.suite) return false;
    if (state.task && s.entry !== state.task) return false;
    if (state.level && s.level !== state.level) return false;
    if (state.outcome === "not-correct" ? s.outcome === "correct"
      : state.outcome && s.outcome !== state.outcome) return false;
    if (state.mode && s.mode !== state.mode) return false;
    return !state.q || haystack(s).includes(state.q.toLowerCase());
  }
  function haystack(s) {
    if (s.hay !== undefined) return s.hay;
    const t = text.get(s.chunk);
    const whole = t && t.answers[s.pos];
    const hay = [s.item, s.model, s.extracted, s.gold, s.detail, s.error, s.mode,
      t && t.prompts[s.prompt], t && t.replies[s.pos], t && t.reasoning[s.pos], ...(whole || [])]
      .filter((x) => x).join("\n").toLowerCase();
    if (t) s.hay = hay; // kept once the texts are in
    return hay;
  }
  const ORDERS = { // "": level order, as the chunks hold the samples
    slowest: (a, b) => (b.latency || 0) - (a.latency || 0),
    tokens: (a, b) => tokens(b) - tokens(a),
    cost: (a, b) => (b.cost || 0) - (a.cost || 0),
  };
  const tokens = (s) => (s.promptTokens || 0) + (s.completionTokens || 0);

  function fillSelect(id, values, all) {
    const sel = $(id);
    sel.replaceChildren(el("option", { value: "", text: all }),
      ...values.map((v) => el("option", { value: v[0], text: v[1] })));
  }
  function setupControls() {
    const pairs = (xs) => xs.map((x) => [x, x]);
    fillSelect("pr-f-model", pairs(M.models), "every model");
    fillSelect("pr-f-suite", M.suites.map((s) => [s, s.split("/").pop() || "(none)"]), "every suite");
    fillSelect("pr-f-task", pairs(M.tasks), "every task");
    fillSelect("pr-f-level", pairs(M.levels), "every level");
    fillSelect("pr-f-outcome", [["correct", "correct"], ["wrong", "wrong"], ["error", "call error"],
      ["not-correct", "wrong or error"]], "every outcome");
    fillSelect("pr-f-mode", pairs(M.modes), "every failure mode");
    fillSelect("pr-f-kind", M.kinds.map((k, i) => [String(i), k]), "every pair");
    fillSelect("pr-f-sort", [["slowest", "slowest first"], ["tokens", "most tokens first"],
      ["cost", "most expensive first"]], "level order");
    for (const key of [...FILTERS, "kind", "sort"]) {
      $("pr-f-" + key).addEventListener("change", (e) => {
        state[key] = e.target.value; state.page = 0; changed();
      });
    }
    let timer = 0;
    $("pr-f-q").addEventListener("input", (e) => {
      clearTimeout(timer);
      timer = setTimeout(() => { state.q = e.target.value.trim(); state.page = 0; changed(); }, 150);
    });
    $("pr-reset").addEventListener("click", () => {
      for (const k of [...FILTERS, "kind", "q", "sort"]) state[k] = "";
      state.page = 0; changed();
    });
    for (const view of ["samples", "pairs"]) {
      $("pr-v-" + view).addEventListener("click", () => { state.view = view; state.page = 0; changed(); });
    }
    if (!M.comparisons.length) $("pr-v-pairs").hidden = true;
    $("pr-detail-close").addEventListener("click", () => { state.sample = ""; changed(); });
    document.addEventListener("keydown", (e) => {
      if (e.target.closest && e.target.closest("input, select, textarea")) return;
      if (e.key === "Escape" && state.sample) { state.sample = ""; changed(); }
      if ((e.key === "j" || e.key === "k") && state.sample) step(e.key === "j" ? 1 : -1);
    });
  }
  function syncControls() {
    for (const key of [...FILTERS, "kind", "sort"]) {
      const sel = $("pr-f-" + key);
      if (state[key] && ![...sel.options].some((o) => o.value === state[key])) {
        sel.append(el("option", { value: state[key], text: state[key] + " (none here)" }));
      }
      sel.value = state[key];
    }
    if ($("pr-f-q").value.trim() !== state.q) $("pr-f-q").value = state.q;
    const pairs = state.view === "pairs";
    $("pr-v-samples").classList.toggle("on", !pairs);
    $("pr-v-pairs").classList.toggle("on", pairs);
    for (const id of ["pr-f-outcome", "pr-f-mode", "pr-f-sort"]) $(id).hidden = pairs;
    $("pr-f-kind").hidden = !pairs;
    $("pr-f-model").title = pairs ? "the candidate" : "";
  }

  // -- the address bar -----------------------------------------------------------------------
  function readHash() {
    const raw = location.hash.slice(1);
    if (!raw.includes("=")) return false; // a plain anchor (#levels): not a view
    const p = new URLSearchParams(raw);
    for (const k of HASH_KEYS) state[k] = p.get(k) || (k === "view" ? "samples" : "");
    state.page = 0;
    land = true;
    return true;
  }
  function writeHash() {
    const p = new URLSearchParams();
    for (const k of HASH_KEYS) {
      if (state[k] && !(k === "view" && state[k] === "samples")) p.set(k, state[k]);
    }
    const hash = p.toString().replace(/\+/g, "%20");
    if (hash !== location.hash.slice(1)) history.replaceState(null, "", hash ? "#" + hash : location.pathname);
  }
  function changed() { writeHash(); render(); }

  // -- rendering -----------------------------------------------------------------------------
  let rendering = Promise.resolve();
  function render() {
    const mine = ++generation;
    rendering = rendering.then(() => draw(mine)).catch((err) => {
      say("pr-status", "The viewer failed: " + err.message);
      console.error(err);
    }).finally(() => {
      document.documentElement.dataset.rendered = String(mine);
    });
    return rendering;
  }
  async function draw(mine) {
    syncControls();
    if (mine !== generation) return; // a newer change is queued: draw that one
    if (state.sample) await showSample(state.sample); else $("pr-detail").hidden = true;
    if (state.view === "pairs") await drawPairs(); else await drawSamples();
    if (land && mine === generation) { land = false; if (!state.sample) bringIntoSight(); }
  }
  // A link (terminal, JUnit, the tables above) names a view, not an element: once drawn,
  // its status line and first sample (or pair, or the level picker) are scrolled to just
  // below the sticky bars, which would otherwise cover them.
  function bringIntoSight() {
    const status = $("pr-status");
    const bar = document.querySelector(".pr-bar");
    // Where the bar sits once stuck (its top offset, under the nav), whatever the scroll now.
    const covered = bar ? (parseFloat(getComputedStyle(bar).top) || 0) + bar.offsetHeight : 0;
    const top = status.getBoundingClientRect().top + scrollY - covered - 4;
    scrollTo(0, Math.max(0, top));
  }
  async function loaded(chunks) {
    // Past the limit the filters must pick a level; a single level loads whatever its size
    // (nothing narrower to pick: a level of 25,000 samples must still open).
    const n = chunks.reduce((a, c) => a + c.n, 0);
    const levels = new Set(chunks.map((c) => c.task + "\u0000" + c.level));
    if (n > M.loadLimit && levels.size > 1) return null;
    const datas = await Promise.all(chunks.map(loadMeta));
    if (state.q) await Promise.all(chunks.map((c) => loadText(c.key)));
    return chunks.map((c, i) => ({ chunk: c, data: datas[i] }));
  }
  function narrow(target, chunks, what) {
    const n = chunks.reduce((a, c) => a + c.n, 0);
    say("pr-status", `${plural(n, what)} match these filters: more than this page loads ` +
      `at once (${count(M.loadLimit)}). Pick a level:`);
    const body = el("tbody");
    for (const c of chunks) {
      const wrong = (c.outcome.wrong || 0) + (c.outcome.error || 0);
      body.append(el("tr", {},
        el("td", {}, el("a", { href: "#", onclick: (e) => {
          e.preventDefault(); state.task = c.task; state.level = c.level; state.page = 0; changed();
        }, text: `${c.task} ${c.level}` })),
        el("td", { text: c.models.join(", ") }), el("td", { text: String(c.n) }),
        el("td", { text: String(wrong) })));
    }
    target.replaceChildren(el("table", { class: "pr-levels" },
      el("thead", {}, el("tr", {}, ...["level", "models", "samples", "wrong or error"].map(
        (h) => el("th", { text: h })))), body));
  }

  async function drawSamples() {
    $("pr-pairs").hidden = true;
    const target = $("pr-samples");
    target.hidden = false;
    const chunks = M.chunks.filter(chunkMatches);
    const data = await loaded(chunks);
    if (data === null) { narrow(target, chunks, "sample"); return; }
    let list = [];
    for (const { data: d } of data) for (const s of d.samples) if (sampleMatches(s)) list.push(s);
    if (ORDERS[state.sort]) list = list.slice().sort(ORDERS[state.sort]);
    current = list;
    const total = chunks.reduce((a, c) => a + c.n, 0);
    const pages = Math.max(1, Math.ceil(list.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE;
    const page = list.slice(start, start + PAGE);
    say("pr-status", list.length
      ? `${plural(list.length, "sample")} of ${count(total)} match` +
        (pages > 1 ? `; showing ${count(start + 1)}–${count(start + page.length)}` : "")
      : `No sample of ${count(total)} matches these filters.`);
    const head = el("tr", {}, ...["sample", "model", "suite", "task", "level", "outcome",
      "failure mode", "extracted", "gold", "finish", "tokens", "cost", "latency", "cache"]
      .map((h) => el("th", { text: h })));
    const body = el("tbody");
    for (const s of page) body.append(sampleRow(s));
    target.replaceChildren(el("table", { class: "pr-list" }, el("thead", {}, head), body),
      pager(list.length, PAGE));
  }
  function cell(value, cls) {
    const t = shown(value);
    return el("td", { class: cls, title: t.length > 14 ? t : null, text: t });
  }
  function sampleRow(s) {
    // The item's own part ("[D2-s1-007]"): the task column names the entry.
    const own = s.item.startsWith(s.entry + "[") ? s.item.slice(s.entry.length) : s.item;
    const link = el("a", { href: "#sample=" + encodeURIComponent(s.id), text: own,
      onclick: (e) => { e.preventDefault(); state.sample = s.id; changed(); } });
    return el("tr", { "data-id": s.id, class: s.id === state.sample ? "sel" : null },
      el("td", { class: "wide", title: s.item }, link), cell(s.model), cell(s.suite.split("/").pop()),
      cell(s.entry), cell(s.level), el("td", { class: "o-" + s.outcome, text: s.outcome }),
      cell(s.mode || ""), cell(s.extracted ?? "-"), cell(s.gold ?? "-"), cell(s.finish || "-"),
      cell(tokens(s) ? String(tokens(s)) : "-"), cell(s.cost ? "$" + Number(s.cost).toPrecision(2) : "-"),
      cell(s.latency ? num(s.latency, 2) + " s" : "-"), cell(s.cached ? "cached" : ""));
  }
  function pager(count, size) {
    const pages = Math.ceil(count / size);
    if (pages <= 1) return el("span");
    const go = (p) => () => { state.page = p; render(); };
    return el("p", { class: "pr-pager" },
      el("button", { type: "button", disabled: state.page <= 0, onclick: go(state.page - 1), text: "‹ previous" }),
      ` page ${state.page + 1} of ${pages} `,
      el("button", { type: "button", disabled: state.page >= pages - 1, onclick: go(state.page + 1), text: "next ›" }));
  }
  function step(delta) {
    const i = current.findIndex((s) => s.id === state.sample);
    if (i < 0) return;
    const next = current[i + delta];
    if (next) { state.sample = next.id; state.page = Math.floor((i + delta) / PAGE); changed(); }
  }

  // -- one sample ----------------------------------------------------------------------------
  async function find(id) {
    const where = id.split("-")[0];
    for (const c of M.chunks) {
      if (c.lh !== where) continue;
      const s = (await loadMeta(c)).samples.find((x) => x.id === id);
      if (s) return s;
    }
    return null;
  }
  function facts(rows, narrow) {
    return el("dl", { class: narrow ? "pr-facts narrow" : "pr-facts" }, ...rows.filter((r) => r)
      .flatMap(([k, v]) => [el("dt", { text: k }), el("dd", { text: shown(v) })]));
  }
  // The extracted and gold answers whole (the list holds them cut when long).
  const answers = (s, t) => (t && t.answers[s.pos]) || [s.extracted, s.gold];
  function sampleFacts(s, t) {
    const [extracted, gold] = answers(s, t);
    return [
      ["outcome", s.outcome + (s.mode ? ` (${s.mode})` : "")],
      s.detail && ["detail", s.detail],
      ["extracted", extracted ?? "(none)"], ["gold", gold ?? "-"],
      s.score !== null && s.score !== undefined && ["score", String(s.score)],
      ["finish reason", s.finish || "-"],
      ["tokens", `${s.promptTokens ?? "-"} prompt + ${s.completionTokens ?? "-"} completion` +
        (s.reasoningTokens ? ` (${s.reasoningTokens} reasoning)` : "")],
      ["cost", s.cost ? "$" + num(s.cost, 6) : s.cached ? "0 (answered from the cache)" : "-"],
      ["latency", (s.latency ? num(s.latency, 2) + " s" : "-") + (s.cached ? " (the original call's)" : "")],
      ["cache", s.cached ? "answered from the response cache" : "called in this run"],
      s.error && ["error", s.error],
      ["model", s.model], ["suite", s.suite || "-"], ["task", s.task ? `${s.entry} (${s.task})` : s.entry],
      ["level", s.level], s.style && ["style", s.style], s.extraction && ["extraction", s.extraction],
      s.repeat && ["repeat", String(s.repeat)],
    ];
  }
  function texts(s, t, open) {
    const prompt = s.prompt >= 0 ? t.prompts[s.prompt] : null;
    const reply = t.replies[s.pos];
    const reasoning = t.reasoning[s.pos];
    const parts = [
      el("details", { open: open, class: "pr-prompt" }, el("summary", { text: "Prompt" }),
        el("pre", { text: prompt === null ? "(not rebuilt: the task is not installed here, its generator changed since the run, or only a failed call asked it: such rows keep no item address)" : shown(prompt) })),
    ];
    if (reasoning !== null && reasoning !== undefined) {
      parts.push(el("details", { class: "pr-reasoning" },
        el("summary", { text: `Reasoning (${count(reasoning.length)} characters)` }),
        el("pre", { text: shown(reasoning) })));
    } else if (s.reasoningKind === "separate") {
      parts.push(el("p", { class: "muted", text: "Reasoning: sent apart (reasoning_content), not kept: the run turned reasoning off, or the answer was recorded or cached before reasoning was kept." }));
    }
    parts.push(el("p", {}, el("b", { text: "Reply" })),
      el("pre", { class: "pr-reply", text: reply === null ? "(no reply: the call failed)" : shown(reply) }));
    return parts;
  }
  async function showSample(id) {
    const box = $("pr-detail");
    const s = await find(id);
    box.hidden = false;
    if (!s) {
      $("pr-detail-body").replaceChildren(el("p", { text: `No sample ${id} in this report.` }));
      return;
    }
    const t = await loadText(s.chunk);
    const link = el("a", { href: "#sample=" + encodeURIComponent(s.id), text: "link to this sample" });
    say("pr-detail-title", `${s.item} · ${s.model}`);
    $("pr-detail-body").replaceChildren(el("p", { class: "muted" }, `id ${s.id} · `, link,
      " · j / k: next / previous, Esc: close"), facts(sampleFacts(s, t)), ...texts(s, t, true));
    if (!box.dataset.shown || box.dataset.shown !== id) {
      box.dataset.shown = id;
      box.scrollIntoView({ block: "start" });
    }
  }

  // -- candidate beside baseline -------------------------------------------------------------
  async function drawPairs() {
    $("pr-samples").hidden = true;
    const target = $("pr-pairs");
    target.hidden = false;
    const cmps = M.comparisons.map((c, i) => ({ ...c, i })).filter((c) =>
      (!state.model || c.candidate === state.model) && (!state.suite || !c.suite || c.suite === state.suite) &&
      (!state.task || c.entry === state.task) && (!state.level || c.level === state.level));
    const keys = [...new Set(cmps.flatMap((c) => c.chunks))];
    const chunks = keys.map((k) => chunkOf.get(k));
    const data = await loaded(chunks);
    if (data === null) { narrow(target, chunks, "sample"); return; }
    const wanted = new Set(cmps.map((c) => c.i));
    let list = [];
    for (const { chunk, data: d } of data) {
      for (const [ci, cand, base, kind] of d.pairs) {
        if (!wanted.has(ci) || (state.kind !== "" && kind !== Number(state.kind))) continue;
        const pair = { ci, kind, cand: d.samples[cand], base: base >= 0 ? d.samples[base] : null, chunk: chunk.key };
        const q = state.q.toLowerCase();
        if (q && !(haystack(pair.cand).includes(q) || (pair.base && haystack(pair.base).includes(q)))) continue;
        list.push(pair);
      }
    }
    list.sort((a, b) => a.kind - b.kind || a.ci - b.ci || (a.cand.item < b.cand.item ? -1 : a.cand.item > b.cand.item ? 1 : 0));
    const counts = M.kinds.map((k, i) => [k, list.filter((p) => p.kind === i).length]).filter(([, n]) => n);
    say("pr-status", list.length
      ? `${plural(list.length, "pair")} in ${plural(cmps.length, "comparison")}: ` + counts.map(([k, n]) => `${n} ${k}`).join(", ")
      : "No pair matches these filters.");
    state.page = Math.min(state.page, Math.max(0, Math.ceil(list.length / PAIR_PAGE) - 1));
    const start = state.page * PAIR_PAGE;
    const page = list.slice(start, start + PAIR_PAGE);
    for (const key of new Set(page.map((p) => p.chunk))) await loadText(key);
    target.replaceChildren(...page.map(pairCard), pager(list.length, PAIR_PAGE));
  }
  function side(title, s, t) {
    if (!s) return el("div", { class: "pr-side" }, el("h4", { text: title }),
      el("p", { class: "muted", text: "No answer of the baseline in these results (a stored baseline file is not part of the report)." }));
    return el("div", { class: "pr-side" },
      el("h4", {}, `${title}: ${s.model} `, el("span", { class: "o-" + s.outcome, text: s.outcome })),
      facts([["extracted", answers(s, t)[0] ?? "(none)"], s.mode && ["failure mode", s.mode + (s.detail ? ` — ${s.detail}` : "")],
        ["finish reason", s.finish || "-"], ["tokens", String(tokens(s) || "-")],
        ["latency", s.latency ? num(s.latency, 2) + " s" + (s.cached ? " (cached)" : "") : "-"]], true),
      ...texts(s, t, false).slice(1),
      el("p", {}, el("a", { href: "#sample=" + encodeURIComponent(s.id), text: "this sample alone" })));
  }
  function pairCard(p) {
    const t = text.get(p.chunk);
    const prompt = p.cand.prompt >= 0 ? t.prompts[p.cand.prompt] : null;
    return el("article", { class: "pr-pair k" + p.kind },
      el("h3", {}, el("span", { class: "pr-kind", text: M.kinds[p.kind] }), ` ${p.cand.item} `,
        el("span", { class: "muted", text: `${p.cand.suite.split("/").pop()} · ${p.cand.entry} ${p.cand.level} · gold ${shown(answers(p.cand, t)[1])}` })),
      el("details", { class: "pr-prompt" }, el("summary", { text: "Prompt (the same for both)" }),
        el("pre", { text: prompt === null ? "(not rebuilt here)" : shown(prompt) })),
      el("div", { class: "pr-sides" }, side("Baseline", p.base, t), side("Candidate", p.cand, t)),
      p.base ? pairDiff(p, t) : null);
  }

  // -- where two replies differ --------------------------------------------------------------
  const DIFF_CELLS = 1e6; // tokens × tokens past the common ends: beyond, no diff (~50 ms a pair)
  // Word-level diff (whitespace kept as its own tokens): [op, text] runs, op "=", "-" (only
  // the baseline's), "+" (only the candidate's); null when the texts are too long to compare.
  function wordDiff(a, b) {
    const x = a.split(/(\s+)/).filter((w) => w), y = b.split(/(\s+)/).filter((w) => w);
    let lo = 0;
    while (lo < x.length && lo < y.length && x[lo] === y[lo]) lo++;
    let hx = x.length, hy = y.length;
    while (hx > lo && hy > lo && x[hx - 1] === y[hy - 1]) { hx--; hy--; }
    const n = hx - lo, m = hy - lo;
    if (n * m > DIFF_CELLS) return null;
    // Longest common subsequence over the middle, from the end: L[i][j] for x[i..], y[j..].
    const L = new Uint32Array((n + 1) * (m + 1));
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        L[i * (m + 1) + j] = x[lo + i] === y[lo + j] ? L[(i + 1) * (m + 1) + j + 1] + 1
          : Math.max(L[(i + 1) * (m + 1) + j], L[i * (m + 1) + j + 1]);
      }
    }
    const out = [];
    const push = (op, w) => {
      if (out.length && out[out.length - 1][0] === op) out[out.length - 1][1] += w; else out.push([op, w]);
    };
    for (let k = 0; k < lo; k++) push("=", x[k]);
    let i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && x[lo + i] === y[lo + j]) { push("=", x[lo + i]); i++; j++; }
      else if (i < n && (j === m || L[(i + 1) * (m + 1) + j] >= L[i * (m + 1) + j + 1])) push("-", x[lo + i++]);
      else push("+", y[lo + j++]);
    }
    for (let k = hx; k < x.length; k++) push("=", x[k]);
    return out;
  }
  function diffView(a, b) {
    if (a === null || a === undefined || b === null || b === undefined) return el("p", { class: "muted", text: "(nothing to compare: a call failed)" });
    if (a === b) return el("p", { class: "muted", text: "(the same)" });
    const runs = wordDiff(shown(a), shown(b));
    if (runs === null) return el("p", { class: "muted", text: "(too long to compare word by word)" });
    return el("pre", { class: "pr-diff" }, ...runs.map(([op, w]) =>
      op === "=" ? w : el(op === "-" ? "del" : "ins", { text: w })));
  }
  function pairDiff(p, t) {
    const reply = (s) => t.replies[s.pos];
    return el("details", { class: "pr-diffs", open: true },
      el("summary", { text: "Where they differ, word by word (struck: the baseline's only; underlined: the candidate's only)" }),
      el("p", {}, el("b", { text: "Extracted answers" })), diffView(answers(p.base, t)[0], answers(p.cand, t)[0]),
      el("p", {}, el("b", { text: "Replies" })), diffView(reply(p.base), reply(p.cand)));
  }

  // -- the Levels table: sorted by a click on a header (again: the other way) ---------------
  function sortable(table) {
    const head = table.rows[0];
    let by = -1, down = false;
    [...head.cells].forEach((th, col) => {
      th.title = "sort by this column";
      th.style.cursor = "pointer";
      th.addEventListener("click", () => {
        down = by === col ? !down : false; by = col;
        const value = (tr) => (tr.cells[col] ? tr.cells[col].textContent : "");
        const rows = [...table.rows].slice(1);
        rows.sort((a, b) => {
          const x = value(a), y = value(b), nx = parseFloat(x), ny = parseFloat(y);
          const c = !isNaN(nx) && !isNaN(ny) && nx !== ny ? nx - ny : x.localeCompare(y, undefined, { numeric: true });
          return down ? -c : c;
        });
        const body = head.parentNode;
        for (const tr of rows) body.append(tr);
        for (const h of head.cells) h.removeAttribute("aria-sort");
        th.setAttribute("aria-sort", down ? "descending" : "ascending");
      });
    });
  }

  // -- start ---------------------------------------------------------------------------------
  for (const table of document.querySelectorAll("table.pr-sortable")) sortable(table);
  setupControls();
  readHash();
  addEventListener("hashchange", () => { if (readHash()) render(); });
  render().then(() => {
    performance.mark("pr-ready");
    document.documentElement.dataset.viewer = "ready";
  });
})();
