// BoardWidget front end (anywidget ESM): one table, text set with textContent only.
// A row is [key, tool, server, status, message, progress, total, started, finished, task_id, live].
// Search, the status and server filters, sorting and paging all happen here, on the rows already
// sent (no round trip to the kernel); only the rows of the current page are in the DOM. Elapsed
// times of live rows tick here once a second; static rows (live 0) never tick.

const PAGE = 50;
const COLUMNS = [
  // [title, sort key or null]
  ["tool", "tool"], ["server", "server"], ["status", "status"], ["message", null],
  ["progress", null], ["elapsed", "elapsed"], ["", null],
];

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

function option(select, value, label) {
  const node = h("option", null, label);
  node.value = value;
  select.append(node);
}

function render({ model, el }) {
  let offset = 0;
  const now = () => Date.now() / 1000 + offset;
  const view = {
    search: "", status: model.get("select_status") || "", server: model.get("select_server") || "",
    sort: null, descending: false, page: 0,
  };

  const root = h("div", "mtj-board");
  const controls = h("div", "mtj-board-controls");
  const search = h("input", "mtj-board-search");
  search.type = "search";
  search.placeholder = "search tool, server, status, message, task id";
  search.setAttribute("aria-label", "search tasks");
  const statusSelect = h("select", "mtj-board-filter");
  statusSelect.setAttribute("aria-label", "filter by status");
  const serverSelect = h("select", "mtj-board-filter");
  serverSelect.setAttribute("aria-label", "filter by server");
  const pager = h("span", "mtj-board-pager");
  const prev = h("button", "mtj-board-page", "‹ prev");
  prev.type = "button";
  const next = h("button", "mtj-board-page", "next ›");
  next.type = "button";
  const pageText = h("span", "mtj-muted mtj-board-range");
  pager.append(prev, pageText, next);
  controls.append(search, statusSelect, serverSelect, pager);
  const caption = h("div", "mtj-board-caption mtj-muted");
  const note = h("div", "mtj-board-note mtj-muted");
  const error = h("div", "mtj-error-text");
  const wrap = h("div", "mtj-board-wrap");
  const table = h("table", "mtj-board-table");
  const head = h("tr");
  const headers = [];
  for (const [title, sortKey] of COLUMNS) {
    const th = h("th", sortKey ? "mtj-board-sortable" : null, title);
    if (sortKey) {
      th.title = `sort by ${sortKey === "elapsed" ? "creation time" : sortKey}`;
      th.addEventListener("click", () => {
        if (view.sort === sortKey) view.descending = !view.descending;
        else {
          view.sort = sortKey;
          view.descending = false;
        }
        view.page = 0;
        update();
      });
    }
    headers.push([th, title, sortKey]);
    head.append(th);
  }
  const thead = h("thead");
  thead.append(head);
  const tbody = h("tbody");
  table.append(thead, tbody);
  wrap.append(table);
  root.append(controls, caption, note, error, wrap);
  el.append(root);

  search.addEventListener("input", () => {
    view.search = search.value.trim().toLowerCase();
    view.page = 0;
    update();
  });
  statusSelect.addEventListener("change", () => {
    view.status = statusSelect.value;
    view.page = 0;
    update();
  });
  serverSelect.addEventListener("change", () => {
    view.server = serverSelect.value;
    view.page = 0;
    update();
  });
  prev.addEventListener("click", () => {
    view.page = Math.max(0, view.page - 1);
    update();
  });
  next.addEventListener("click", () => {
    view.page += 1;
    update();
  });

  const byKey = new Map(); // key -> {tr, cells, row}, for the rows on the page
  const optionSets = new Map(); // select -> "a\u0000b" of the values it offers

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

  function elapsedText(row) {
    const started = row[7], finished = row[8];
    if (typeof started !== "number") return "";
    if (row[10]) return duration((finished === null ? now() : finished) - started);
    return typeof finished === "number" ? duration(finished - started) : "";
  }

  function fillRow(entry, row) {
    const old = entry.row || [];
    const c = entry.cells;
    const [, tool, server, status, message, value, total, , finished, taskId, live] = row;
    if (old[1] !== tool) c.tool.textContent = tool;
    if (old[1] !== tool || old[9] !== taskId) c.tool.title = taskId ? `task ${taskId}` : "";
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
    c.cancel.hidden = !live || finished !== null;
    if (!live || finished !== null) c.cancel.disabled = true;
    c.tr.classList.toggle("mtj-board-static", !live);
    entry.row = row;
    c.elapsed.textContent = elapsedText(row);
  }

  function setOptions(select, values, chosen, allLabel) {
    const wanted = [...new Set(chosen ? [...values, chosen] : values)].sort();
    const signature = wanted.join("\u0000");
    if (optionSets.get(select) !== signature) {
      optionSets.set(select, signature);
      select.replaceChildren();
      option(select, "", allLabel);
      for (const value of wanted) option(select, value, value);
    }
    select.value = chosen;
  }

  function matches(row) {
    if (view.status && row[3] !== view.status) return false;
    if (view.server && row[2] !== view.server) return false;
    if (!view.search) return true;
    for (const i of [1, 2, 3, 4, 9]) {
      if (String(row[i] ?? "").toLowerCase().includes(view.search)) return true;
    }
    return false;
  }

  function sortValue(row) {
    switch (view.sort) {
      case "tool": return String(row[1]).toLowerCase();
      case "server": return String(row[2]).toLowerCase();
      case "status": return String(row[3]);
      default: return typeof row[7] === "number" ? row[7] : -Infinity; // elapsed: by creation time
    }
  }

  function arrange(rows) {
    const shown = rows.filter(matches);
    if (view.sort) {
      const sign = view.descending ? -1 : 1;
      const keyed = shown.map((row, i) => [sortValue(row), i, row]);
      keyed.sort((a, b) => (a[0] < b[0] ? -sign : a[0] > b[0] ? sign : a[1] - b[1]));
      return keyed.map((k) => k[2]);
    }
    return shown;
  }

  function update() {
    const rows = model.get("rows") || [];
    setOptions(statusSelect, rows.map((r) => r[3]), view.status, "all statuses");
    setOptions(serverSelect, rows.map((r) => r[2]), view.server, "all servers");
    const shown = arrange(rows);
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    view.page = Math.min(view.page, pages - 1);
    const first = view.page * PAGE;
    const page = shown.slice(first, first + PAGE);

    const seen = new Set();
    page.forEach((row, i) => {
      const key = row[0];
      seen.add(key);
      let entry = byKey.get(key);
      if (!entry) {
        entry = makeRow(key);
        entry.cells.tr = entry.tr;
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

    for (const [th, title, sortKey] of headers) {
      if (!sortKey) continue;
      const on = view.sort === sortKey;
      th.textContent = on ? `${title} ${view.descending ? "▼" : "▲"}` : title;
      th.setAttribute("aria-sort", on ? (view.descending ? "descending" : "ascending") : "none");
    }
    pageText.textContent = shown.length
      ? ` rows ${first + 1}–${first + page.length} of ${shown.length} `
      : " no rows ";
    prev.disabled = view.page === 0;
    next.disabled = view.page >= pages - 1;
    pager.hidden = shown.length <= PAGE;

    const filters = [];
    if (model.get("filter_server")) filters.push(`server ${model.get("filter_server")}`);
    if (model.get("filter_status")) filters.push(`status ${model.get("filter_status")}`);
    caption.textContent = `${shown.length} shown, ${rows.length} of ${model.get("total")} tasks` +
      (filters.length ? ` (${filters.join(", ")})` : "");
    note.textContent = model.get("note");
    note.hidden = !model.get("note");
    error.textContent = model.get("error");
    error.hidden = !model.get("error");
  }

  function tick() {
    for (const entry of byKey.values()) {
      const row = entry.row;
      if (row && row[10] && row[8] === null) entry.cells.elapsed.textContent = elapsedText(row);
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
  const names = ["rows", "total", "error", "note", "filter_server", "filter_status"];
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
