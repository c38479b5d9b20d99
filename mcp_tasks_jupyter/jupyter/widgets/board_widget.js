// BoardWidget front end (anywidget ESM): one table, rows kept by key and updated in place,
// text set with textContent only. Elapsed times tick here once a second.
// A row is [key, tool, server, status, message, progress, total, started, finished].

function h(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function duration(seconds) {
  const s = Math.max(0, seconds);
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

function render({ model, el }) {
  let offset = 0;
  const now = () => Date.now() / 1000 + offset;
  const root = h("div", "mtj-board");
  const caption = h("div", "mtj-board-caption mtj-muted");
  const error = h("div", "mtj-error-text");
  const wrap = h("div", "mtj-board-wrap");
  const table = h("table", "mtj-board-table");
  const head = h("tr");
  for (const title of ["tool", "server", "status", "message", "progress", "elapsed", ""]) head.append(h("th", null, title));
  const thead = h("thead");
  thead.append(head);
  const tbody = h("tbody");
  table.append(thead, tbody);
  wrap.append(table);
  root.append(caption, error, wrap);
  el.append(root);

  const byKey = new Map(); // key -> {tr, cells, row}

  function makeRow(key) {
    const tr = h("tr");
    const cells = {
      tool: h("td", "mtj-tool"), server: h("td"), status: h("td"), message: h("td", "mtj-board-message"),
      progress: h("td"), elapsed: h("td", "mtj-board-elapsed"), action: h("td"),
    };
    cells.badge = h("span", "mtj-badge");
    cells.status.append(cells.badge);
    cells.bar = h("div", "mtj-bar mtj-board-bar");
    cells.fill = h("div", "mtj-fill");
    cells.bar.append(cells.fill);
    cells.progressText = h("span", "mtj-progress-text");
    cells.progress.append(cells.bar, cells.progressText);
    cells.cancel = h("button", "mtj-cancel", "Cancel");
    cells.cancel.type = "button";
    cells.cancel.addEventListener("click", () => {
      cells.cancel.disabled = true;
      model.send({ type: "cancel", key });
    });
    cells.action.append(cells.cancel);
    tr.append(cells.tool, cells.server, cells.status, cells.message, cells.progress, cells.elapsed, cells.action);
    return { tr, cells, row: null };
  }

  function fillRow(entry, row) {
    const old = entry.row || [];
    const c = entry.cells;
    const [, tool, server, status, message, value, total, started, finished] = row;
    if (old[1] !== tool) c.tool.textContent = tool;
    if (old[2] !== server) c.server.textContent = server;
    if (old[3] !== status) {
      c.badge.textContent = status;
      c.badge.className = `mtj-badge mtj-s-${String(status).replace(/[^a-z_]/gi, "")}`;
    }
    if (old[4] !== message) {
      c.message.textContent = message;
      c.message.title = message;
    }
    if (old[5] !== value || old[6] !== total || old[8] !== finished) {
      const known = typeof total === "number" && total > 0 && typeof value === "number";
      c.bar.hidden = !known || finished !== null;
      if (known) c.fill.style.width = `${(Math.min(1, Math.max(0, value / total)) * 100).toFixed(1)}%`;
      c.progressText.textContent = value === null ? "" : known ? `${Math.round((value / total) * 100)}%` : `${value}`;
    }
    c.cancel.hidden = finished !== null;
    if (finished !== null) c.cancel.disabled = true;
    entry.row = row;
    c.elapsed.textContent = duration((finished === null ? now() : finished) - started);
  }

  function update() {
    const rows = model.get("rows") || [];
    const seen = new Set();
    rows.forEach((row, i) => {
      const key = row[0];
      seen.add(key);
      let entry = byKey.get(key);
      if (!entry) {
        entry = makeRow(key);
        byKey.set(key, entry);
      }
      if (entry.row !== row) fillRow(entry, row);
      if (tbody.children[i] !== entry.tr) tbody.insertBefore(entry.tr, tbody.children[i] || null);
    });
    for (const [key, entry] of byKey) {
      if (!seen.has(key)) {
        entry.tr.remove();
        byKey.delete(key);
      }
    }
    const filters = [];
    if (model.get("filter_server")) filters.push(`server ${model.get("filter_server")}`);
    if (model.get("filter_status")) filters.push(`status ${model.get("filter_status")}`);
    caption.textContent = `${rows.length} of ${model.get("total")} tasks` + (filters.length ? ` (${filters.join(", ")})` : "");
    error.textContent = model.get("error");
    error.hidden = !model.get("error");
  }

  function tick() {
    for (const entry of byKey.values()) {
      const row = entry.row;
      if (row && row[8] === null) entry.cells.elapsed.textContent = duration(now() - row[7]);
    }
  }

  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    queueMicrotask(() => {
      scheduled = false;
      update();
    });
  }
  function onClock() {
    offset = model.get("sent_at") - Date.now() / 1000;
  }
  const names = ["rows", "total", "error", "filter_server", "filter_status"];
  for (const name of names) model.on(`change:${name}`, schedule);
  model.on("change:sent_at", onClock);
  update();
  const timer = setInterval(tick, 1000);
  return () => {
    clearInterval(timer);
    for (const name of names) model.off(`change:${name}`, schedule);
    model.off("change:sent_at", onClock);
  };
}

export default { render };
