// TaskWidget front end (anywidget ESM). Everything from the server is set with textContent;
// no innerHTML. Clocks (elapsed, TTL) tick here, from epoch-second traits, so the kernel sends
// nothing while a task merely runs. A question the task asks is drawn by QuestionForms
// (question_form.js, joined in front of this module by question_form.py).

const IMAGE_MIMES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const TRAITS = ["tool", "server", "status", "status_message", "progress", "started", "finished",
  "created", "ttl_ms", "poll_interval_ms", "done", "error", "result", "logs", "log_count",
  "pending", "cancelling", "cancel_error", "questions"];

function h(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function duration(seconds) {
  const s = Math.max(0, seconds);
  if (s < 60) return `${s.toFixed(s < 10 ? 1 : 0)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(Math.floor(s % 60)).padStart(2, "0")} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")} min`;
}

function jsonText(value) {
  return JSON.stringify(value);
}

function cutNote(cut) {
  return cut ? h("div", "mtj-muted", `… ${cut.toLocaleString()} more characters not shown`) : null;
}

function treeNode(node, key, depth) {
  const label = key === null ? null : h("b", null, key);
  if (node.t === "v") {
    const row = h("div", "mtj-leaf");
    if (label) row.append(label, ": ");
    row.append(h("code", null, jsonText(node.v)));
    const note = cutNote(node.cut);
    if (note) row.append(note);
    return row;
  }
  if (node.t === "cut") {
    const row = h("div", "mtj-leaf");
    if (label) row.append(label, ": ");
    const size = node.kind === "object" ? `{${node.n} keys}` : `[${node.n} items]`;
    row.append(h("span", "mtj-muted", `${size} (too deep to show)`));
    return row;
  }
  const details = h("details", "mtj-tree");
  if (depth === 0) details.open = true;
  const summary = h("summary");
  if (label) summary.append(label, " ");
  const n = node.items.length + node.more;
  summary.append(h("span", "mtj-muted", node.t === "o" ? `{${n} keys}` : `[${n} items]`));
  const body = h("div", "mtj-tree-body");
  node.items.forEach((item, i) => {
    body.append(node.t === "o" ? treeNode(item[1], item[0], depth + 1) : treeNode(item, `[${i}]`, depth + 1));
  });
  if (node.more) body.append(h("div", "mtj-muted", `… ${node.more.toLocaleString()} more not shown`));
  details.append(summary, body);
  return details;
}

function table(structured) {
  const wrap = h("div", "mtj-table-wrap");
  const tbl = h("table", "mtj-table");
  const head = h("tr");
  for (const column of structured.columns) head.append(h("th", null, column));
  const thead = h("thead");
  thead.append(head);
  const tbody = h("tbody");
  for (const row of structured.rows) {
    const tr = h("tr");
    for (const cell of row) tr.append(h("td", null, cell));
    tbody.append(tr);
  }
  tbl.append(thead, tbody);
  wrap.append(tbl);
  const notes = [];
  if (structured.more_rows) notes.push(`${structured.more_rows.toLocaleString()} more rows not shown`);
  if (structured.more_columns) notes.push(`${structured.more_columns.toLocaleString()} more columns not shown`);
  if (notes.length) wrap.append(h("div", "mtj-muted", notes.join("; ")));
  return wrap;
}

export function preview(result) {
  const box = h("div", "mtj-result");
  if (result.is_error) box.append(h("div", "mtj-error-title", "the tool reported an error"));
  for (const block of result.blocks) {
    if (block.kind === "text") {
      box.append(h("pre", result.is_error ? "mtj-pre mtj-error-text" : "mtj-pre", block.text));
      const note = cutNote(block.cut);
      if (note) box.append(note);
    } else if (block.kind === "image" && IMAGE_MIMES.has(block.mime)) {
      const img = h("img", "mtj-image");
      img.alt = `${block.mime} image`;
      img.src = `data:${block.mime};base64,${block.data}`;
      box.append(img);
    } else if (block.kind === "link") {
      const row = h("div", null, "link: ");
      if (block.href && /^https?:\/\//i.test(block.href)) {
        const a = h("a", null, block.label);
        a.href = block.href;
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        row.append(a);
      } else {
        row.append(h("span", null, block.label));
      }
      row.append(" ", h("code", null, block.uri));
      box.append(row);
    } else if (block.kind === "resource") {
      const row = h("div", null, "resource ");
      row.append(h("code", null, block.uri));
      box.append(row);
      if (block.text !== null && block.text !== undefined) {
        box.append(h("pre", "mtj-pre", block.text));
        const note = cutNote(block.cut);
        if (note) box.append(note);
      }
    } else {
      box.append(h("div", "mtj-muted", block.text || "(content not shown)"));
    }
  }
  const structured = result.structured;
  if (structured && structured.kind === "table") box.append(table(structured));
  else if (structured && structured.kind === "tree") box.append(treeNode(structured.node, null, 0));
  if (!box.childNodes.length) box.append(h("div", "mtj-muted", "(no content)"));
  return box;
}

function render({ model, el }) {
  let offset = 0; // kernel clock minus browser clock, seconds
  const now = () => Date.now() / 1000 + offset;

  const root = h("div", "mtj-task");
  const head = h("div", "mtj-head");
  const badge = h("span", "mtj-badge");
  const tool = h("span", "mtj-tool");
  const server = h("span", "mtj-server");
  const cancel = h("button", "mtj-cancel", "Cancel");
  cancel.type = "button";
  head.append(badge, " ", tool, h("span", "mtj-muted", " on "), server, cancel);
  const message = h("div", "mtj-message");
  const progressRow = h("div", "mtj-progress");
  const bar = h("div", "mtj-bar");
  const fill = h("div", "mtj-fill");
  bar.append(fill);
  const progressText = h("span", "mtj-progress-text");
  progressRow.append(bar, progressText);
  const meta = h("div", "mtj-meta mtj-muted");
  const elapsed = h("span", "mtj-elapsed");
  const ttl = h("span", "mtj-ttl");
  const poll = h("span", "mtj-poll");
  meta.append(elapsed, ttl, poll);
  const pending = h("div", "mtj-pending");
  const cancelError = h("div", "mtj-error-text");
  const error = h("pre", "mtj-pre mtj-error-text");
  const result = h("div");
  const logs = h("details", "mtj-logs");
  const logsSummary = h("summary");
  const logsBody = h("pre", "mtj-pre mtj-log-lines");
  logs.append(logsSummary, logsBody);
  const questions = QuestionForms.questionsView(model);
  root.append(head, message, progressRow, meta, pending, questions.root, cancelError, error, result, logs);
  el.append(root);

  let shownResult = null;
  let shownLogs = null;

  function tick() {
    const started = model.get("started");
    const finished = model.get("finished");
    const end = finished === null || finished === undefined ? now() : finished;
    elapsed.textContent = `${finished === null || finished === undefined ? "running for" : "took"} ${duration(end - started)}`;
    const ttlMs = model.get("ttl_ms");
    if (ttlMs === null || ttlMs === undefined) {
      ttl.textContent = "";
    } else {
      const created = model.get("created") ?? started;
      const left = created + ttlMs / 1000 - now();
      ttl.textContent = left > 0 ? ` · TTL ${duration(left)} left` : " · TTL over";
    }
  }

  function update() {
    const status = model.get("status");
    badge.textContent = status;
    badge.className = `mtj-badge mtj-s-${status.replace(/[^a-z_]/gi, "")}`;
    tool.textContent = model.get("tool");
    server.textContent = model.get("server");
    message.textContent = model.get("status_message");
    message.hidden = !model.get("status_message");

    const done = model.get("done");
    const progress = model.get("progress");
    if (progress && !done) {
      const [value, total, text] = progress;
      const known = typeof total === "number" && total > 0;
      const fraction = known ? Math.min(1, Math.max(0, value / total)) : null;
      bar.classList.toggle("mtj-indeterminate", !known);
      fill.style.width = known ? `${(fraction * 100).toFixed(1)}%` : "";
      progressText.textContent = (known ? `${value}/${total} (${Math.round(fraction * 100)}%)` : `${value}`) + (text ? ` ${text}` : "");
      progressRow.hidden = false;
    } else {
      progressRow.hidden = true;
    }

    const pollMs = model.get("poll_interval_ms");
    poll.textContent = pollMs === null || pollMs === undefined ? "" : ` · polled every ${duration(pollMs / 1000)}`;

    questions.update();
    // A question with a form on show says so itself; list only the others (answered elsewhere).
    const withForms = questions.openMessages();
    const waiting = (model.get("pending") || []).filter((q) => !withForms.has(q));
    pending.replaceChildren(...waiting.map((q) => h("div", "mtj-question", `waiting for input: ${q}`)));
    pending.hidden = !waiting.length;

    const cancelling = model.get("cancelling");
    cancel.disabled = done || cancelling;
    cancel.textContent = cancelling ? "Cancelling…" : "Cancel";
    cancel.hidden = done;
    cancelError.textContent = model.get("cancel_error");
    cancelError.hidden = !model.get("cancel_error");

    error.textContent = model.get("error");
    error.hidden = !model.get("error");
    error.className = `mtj-pre ${status === "cancelled" ? "mtj-muted" : "mtj-error-text"}`;

    const res = model.get("result");
    if (res !== shownResult) {
      shownResult = res;
      result.replaceChildren(...(res ? [preview(res)] : []));
    }

    const lines = model.get("logs") || [];
    if (lines !== shownLogs) {
      shownLogs = lines;
      const count = model.get("log_count");
      logsSummary.textContent = `log (${count} line${count === 1 ? "" : "s"}${count > lines.length ? `, last ${lines.length} shown` : ""})`;
      logsBody.textContent = lines.join("\n");
    }
    logs.hidden = !lines.length;
    tick();
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

  cancel.addEventListener("click", () => {
    cancel.disabled = true;
    model.send({ type: "cancel" });
  });
  for (const name of TRAITS) model.on(`change:${name}`, schedule);
  // Only a live update says what the kernel's clock reads now (a restored state may be old).
  model.on("change:sent_at", onClock);
  update();
  const timer = setInterval(tick, 1000);

  return () => {
    clearInterval(timer);
    for (const name of TRAITS) model.off(`change:${name}`, schedule);
    model.off("change:sent_at", onClock);
  };
}

export default { render };
