"""The page's inline CSS and JS, as constants: the page must work from a file with nothing fetched.

The script only reads the embedded JSON blob (``#dg-data``) and builds table rows with ``textContent``, so no
database text is ever parsed as HTML in the browser. The URL hash drives the table, which the tests use:
``#filter=dropped`` (or ``included``; any other value is a text filter), ``q=``, ``source=``, ``sort=KEY``,
``dir=desc``, ``page=N`` (1-based).
"""

CSS = r"""
:root { --fg:#1f2933; --muted:#616e7c; --line:#d9e2ec; --bg:#f5f7fa; --card:#fff; --accent:#2563eb;
  --entity:#2563eb; --chunk:#059669; --report:#9333ea; --claim:#d97706; --ok:#15803d; --bad:#b91c1c; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg); font:14px/1.45 system-ui, -apple-system, "Segoe UI",
  Roboto, "Helvetica Neue", Arial, "DejaVu Sans", sans-serif; }
main { max-width:1360px; margin:0 auto; padding:18px 20px 40px; }
h1 { font-size:20px; margin:0 0 4px; } h2 { font-size:15px; margin:0 0 10px; letter-spacing:.02em; }
h3 { font-size:13px; margin:12px 0 6px; color:var(--muted); text-transform:uppercase; letter-spacing:.05em; }
.card { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:14px 16px;
  margin:0 0 14px; }
.grid { display:grid; grid-template-columns: minmax(0,1.5fr) minmax(0,1fr); gap:14px; align-items:start; }
.grid > .card { margin:0 0 14px; }
.meta { color:var(--muted); font-size:12.5px; } .meta b { color:var(--fg); font-weight:600; }
.question { font-size:17px; font-weight:600; margin:8px 0 2px; }
.rewrite { margin:4px 0 0; color:var(--muted); } .rewrite b { color:var(--fg); }
.badge { display:inline-block; padding:1px 7px; border-radius:10px; font-size:11.5px; font-weight:600;
  background:#e4e7eb; color:#323f4b; margin-right:4px; white-space:nowrap; }
.b-mode { background:#dbeafe; color:#1e40af; } .b-included, .b-kept, .b-done, .b-used { background:#dcfce7;
  color:#166534; } .b-dropped, .b-failed { background:#fee2e2; color:#991b1b; }
.b-uncovered { background:#fef3c7; color:#92400e; } .b-mapped, .b-rated, .b-listed { background:#e0e7ff;
  color:#3730a3; }
.bar { display:flex; height:22px; border-radius:5px; overflow:hidden; background:#e5e7eb; margin:6px 0 4px; }
.bar > span { display:block; height:100%; min-width:2px; color:#fff; font-size:11px; line-height:22px;
  padding-left:5px; overflow:hidden; white-space:nowrap; text-overflow:clip; }
.bar.thin { height:8px; } .bar.thin > span { line-height:8px; }
.seg-answer { background:#f59e0b; } .seg-prompt { background:#64748b; } .seg-question { background:#0ea5e9; }
.seg-history { background:#a855f7; } .seg-context { background:#22c55e; }
.seg-slack { background:#e5e7eb; color:#52606d; }
.seg-used { background:#15803d; } .seg-free { background:#bbf7d0; color:#14532d; } .seg-over { background:#dc2626; }
.legend { display:flex; flex-wrap:wrap; gap:4px 14px; font-size:12px; color:var(--muted); }
.legend i { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:4px;
  vertical-align:-1px; }
.arith { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size:12.5px;
  background:#f8fafc; border:1px solid var(--line); border-radius:5px; padding:6px 8px; margin:8px 0 0;
  white-space:pre-wrap; }
table { border-collapse:collapse; width:100%; font-size:12.5px; }
th, td { text-align:left; padding:4px 7px; border-bottom:1px solid #eef2f6; vertical-align:top; }
th { color:var(--muted); font-weight:600; background:#f8fafc; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric: tabular-nums; }
td.clip { max-width:340px; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
td.nw { white-space:nowrap; }
td.id { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:11.5px; color:#52606d; }
#items thead th { cursor:pointer; user-select:none; position:sticky; top:0; }
#items thead th[aria-sort=ascending]::after { content:" \25B2"; font-size:9px; }
#items thead th[aria-sort=descending]::after { content:" \25BC"; font-size:9px; }
tr.st-dropped td { color:#7b8794; } tr.st-dropped td.status { color:var(--bad); }
tr.st-included td.status { color:var(--ok); font-weight:600; } tbody tr:hover { background:#f0f7ff; }
.controls { display:flex; gap:8px; align-items:center; flex-wrap:wrap; margin:0 0 8px; }
.controls input, .controls select, .controls button { font:inherit; padding:4px 8px; border:1px solid #cbd2d9;
  border-radius:5px; background:#fff; }
.controls input { min-width:260px; } .controls .count { color:var(--muted); margin-left:auto; }
.score { position:relative; height:12px; width:120px; background:#eef2f6; border-radius:3px; display:inline-block;
  vertical-align:middle; margin-right:6px; }
.score > span { position:absolute; left:0; top:0; bottom:0; border-radius:3px; background:#60a5fa; }
.score > span.no { background:#fca5a5; } .score > b { position:absolute; top:-3px; bottom:-3px; width:2px;
  background:#111827; } .score > b.rel { background:#9333ea; }
svg.graph { width:100%; height:auto; background:#fcfdfe; border:1px solid var(--line); border-radius:6px; }
svg.graph line { stroke:#cbd2d9; stroke-width:1; } svg.graph line.t-RELATED { stroke:#9aa5b1; }
svg.graph line.r-included { stroke:#334e68; stroke-width:2.2; } svg.graph line.r-dropped { stroke:#f07575;
  stroke-width:1.2; stroke-dasharray:5 3; } svg.graph line.t-IN_COMMUNITY { stroke-dasharray:2 3; }
svg.graph line.t-PARENT { stroke:#9333ea; stroke-width:1.6; }
svg.graph .n { cursor:pointer; } svg.graph .n text { font-size:10.5px; fill:#243b53; paint-order:stroke;
  stroke:#fff; stroke-width:3px; stroke-linejoin:round; pointer-events:none; }
svg.graph .n .shape { stroke-width:2; } svg.graph .s-dropped .shape { fill:#fff !important;
  stroke-dasharray:3 2; } svg.graph .s-dropped text { fill:#7b8794; }
svg.graph .n.hl .shape { stroke:#111827 !important; stroke-width:3.5; }
.k-entity .shape { fill:var(--entity); stroke:var(--entity); } .k-chunk .shape { fill:var(--chunk);
  stroke:var(--chunk); } .k-report .shape { fill:var(--report); stroke:var(--report); }
.k-claim .shape { fill:var(--claim); stroke:var(--claim); } .k-other .shape { fill:#9aa5b1; stroke:#9aa5b1; }
.tree, .tree ul { list-style:none; margin:0; padding-left:18px; } .tree { padding-left:0; }
.tree li { margin:3px 0; padding-left:10px; border-left:2px solid #e4e7eb; }
.tree li.st-uncovered { border-left-color:#f59e0b; } .tree li.st-failed { border-left-color:#dc2626; }
.tree .q { font-weight:500; } .tree summary { cursor:pointer; }
.tree .answer { margin:3px 0 4px 14px; padding:6px 8px; background:#f8fafc; border-radius:5px; color:#3e4c59;
  font-size:12.5px; white-space:pre-wrap; }
.stop { font-size:15px; font-weight:600; } .muted { color:var(--muted); } .small { font-size:12px; }
.ledger { display:flex; flex-wrap:wrap; gap:14px; } .ledger table { width:auto; min-width:280px; }
.scroll { max-height:560px; overflow:auto; } .scroll thead th { position:sticky; top:0; z-index:1; }
.pager button[disabled] { opacity:.45; } [hidden] { display:none !important; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("dg-data").textContent);
  var items = data.items, cols = data.columns, PAGE = data.page_size || 200;
  var st = { q: "", status: "all", source: "all", sort: null, dir: 1, page: 0 };
  var body = document.querySelector("#items tbody"), head = document.querySelector("#items thead tr");
  var qBox = document.getElementById("f-q"), sSel = document.getElementById("f-status");
  var srcSel = document.getElementById("f-source"), count = document.getElementById("f-count");
  var prev = document.getElementById("p-prev"), next = document.getElementById("p-next");
  var pageLabel = document.getElementById("p-label");

  function readHash() {
    var h = new URLSearchParams(location.hash.replace(/^#/, ""));
    var f = h.get("filter");
    if (f === "included" || f === "dropped" || f === "all") { st.status = f; } else if (f) { st.q = f; }
    if (h.get("status")) { st.status = h.get("status"); }
    if (h.get("q")) { st.q = h.get("q"); }
    if (h.get("source")) { st.source = h.get("source"); }
    if (h.get("sort")) { st.sort = h.get("sort"); st.dir = h.get("dir") === "desc" ? -1 : 1; }
    if (h.get("page")) { st.page = Math.max(0, (parseInt(h.get("page"), 10) || 1) - 1); }
  }
  function matches(it) {
    if (st.status !== "all" && it.status !== st.status) { return false; }
    if (st.source !== "all" && it.source !== st.source) { return false; }
    if (!st.q) { return true; }
    var q = st.q.toLowerCase();
    return ["id", "label", "location", "reason", "hop", "via", "source", "status"].some(function (k) {
      return it[k] != null && String(it[k]).toLowerCase().indexOf(q) >= 0;
    });
  }
  function compare(a, b) {
    var x = a[st.sort], y = b[st.sort];
    if (x == null && y == null) { return a.n - b.n; }
    if (x == null) { return 1; }
    if (y == null) { return -1; }
    var c = (typeof x === "number" && typeof y === "number") ? x - y : String(x).localeCompare(String(y));
    return c !== 0 ? c * st.dir : a.n - b.n;
  }
  function cell(tr, col, it) {
    var td = document.createElement("td"), v = it[col.key];
    if (col.num) { td.className = "num"; }
    if (col.key === "id") { td.className = "id"; td.title = String(v); v = String(v).slice(0, 16); }
    if (col.key === "status") { td.className = "status"; }
    if (col.key === "score" && typeof v === "number") { v = String(Number(v.toFixed(3))); }
    td.textContent = v == null ? "" : String(v);
    tr.appendChild(td);
  }
  function render() {
    var rows = items.filter(matches);
    if (st.sort) { rows.sort(compare); }
    var pages = Math.max(1, Math.ceil(rows.length / PAGE));
    if (st.page >= pages) { st.page = pages - 1; }
    var start = st.page * PAGE, shown = rows.slice(start, start + PAGE), frag = document.createDocumentFragment();
    shown.forEach(function (it) {
      var tr = document.createElement("tr");
      tr.className = "st-" + it.status;
      tr.setAttribute("data-item-id", it.id);
      tr.setAttribute("data-status", it.status);
      tr.setAttribute("data-source", it.source);
      cols.forEach(function (c) { cell(tr, c, it); });
      frag.appendChild(tr);
    });
    body.replaceChildren(frag);
    count.textContent = rows.length ? ("rows " + (start + 1) + "\u2013" + (start + shown.length) + " of " +
      rows.length + (rows.length !== items.length ? " (filtered from " + items.length + ")" : "")) : "no rows";
    pageLabel.textContent = "page " + (st.page + 1) + " / " + pages;
    prev.disabled = st.page === 0;
    next.disabled = st.page >= pages - 1;
    Array.prototype.forEach.call(head.children, function (th) {
      var k = th.getAttribute("data-key");
      if (k === st.sort) { th.setAttribute("aria-sort", st.dir > 0 ? "ascending" : "descending"); }
      else { th.removeAttribute("aria-sort"); }
    });
    document.body.setAttribute("data-rows-shown", String(shown.length));
  }
  function reset() { st.page = 0; render(); }
  readHash();
  qBox.value = st.q; sSel.value = st.status; srcSel.value = st.source;
  if (sSel.value !== st.status) { st.status = "all"; sSel.value = "all"; }
  if (srcSel.value !== st.source) { st.source = "all"; srcSel.value = "all"; }
  qBox.addEventListener("input", function () { st.q = qBox.value.trim(); reset(); });
  sSel.addEventListener("change", function () { st.status = sSel.value; reset(); });
  srcSel.addEventListener("change", function () { st.source = srcSel.value; reset(); });
  prev.addEventListener("click", function () { st.page -= 1; render(); });
  next.addEventListener("click", function () { st.page += 1; render(); });
  head.addEventListener("click", function (ev) {
    var th = ev.target.closest("th"), k = th && th.getAttribute("data-key");
    if (!k) { return; }
    if (st.sort === k) { st.dir = -st.dir; } else { st.sort = k; st.dir = th.classList.contains("num") ? -1 : 1; }
    reset();
  });
  function nodeEl(id) {
    return document.querySelector('svg.graph [data-node-id="' + (window.CSS && CSS.escape ? CSS.escape(id) : id) +
      '"]');
  }
  body.addEventListener("mouseover", function (ev) {
    var tr = ev.target.closest("tr"), old = document.querySelector("svg.graph .hl");
    if (old) { old.classList.remove("hl"); }
    var el = tr && nodeEl(data.node_of[tr.getAttribute("data-item-id")] || tr.getAttribute("data-item-id"));
    if (el) { el.classList.add("hl"); }
  });
  var svg = document.querySelector("svg.graph");
  if (svg) {
    svg.addEventListener("click", function (ev) {
      var g = ev.target.closest("[data-node-id]");
      if (!g) { return; }
      st.q = g.getAttribute("data-node-id"); qBox.value = st.q; st.status = "all"; sSel.value = "all"; reset();
      document.getElementById("items").scrollIntoView({ behavior: "smooth", block: "start" });
    });
  }
  render();
})();
"""
