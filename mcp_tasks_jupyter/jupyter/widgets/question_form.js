// Question forms (elicitation), drawn from a widget's `questions` trait (see question_form.py for
// the data). Shared by the task widget and the standalone question widget: the Python side joins
// this file with the widget's own module. Everything from the server is set with textContent or
// as a DOM property, never as HTML. The checks here only give quick feedback; the kernel checks
// every answer again and refuses one that does not fit, showing its errors in the form.

const QuestionForms = (() => {
  const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
  const URI = /^[a-zA-Z][a-zA-Z0-9+.\-]*:\S+$/;
  const DATE = /^\d{4}-\d{2}-\d{2}$/;
  const RESEND_AFTER_MS = 10000; // buttons come back if the kernel never answers a submission
  let uid = 0;

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function button(text, cls, title) {
    const b = el("button", `mtj-q-button ${cls}`, text);
    b.type = "button";
    if (title) b.title = title;
    return b;
  }

  function isHttp(url) {
    return typeof url === "string" && /^https?:\/\/[^\s/?#]+[^\s]*$/i.test(url);
  }

  function same(a, b) {
    return JSON.stringify(a) === JSON.stringify(b);
  }

  function localDateTime(iso) {
    const d = new Date(iso);
    if (typeof iso !== "string" || Number.isNaN(d.getTime())) return "";
    const pad = (n) => String(n).padStart(2, "0");
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  function validDate(text) {
    if (!DATE.test(text)) return false;
    const [y, m, d] = text.split("-").map(Number);
    const date = new Date(Date.UTC(y, m - 1, d));
    return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
  }

  // -- one field: a row with its control, and read() -> {present, value, errors} ---------------

  function textControl(field, id) {
    const input = el("input", "mtj-q-input");
    input.type = field.input || "text";
    input.id = id;
    if (typeof field.max_length === "number") input.maxLength = field.max_length;
    if (typeof field.min_length === "number") input.minLength = field.min_length;
    if ("default" in field) {
      input.value = field.input === "datetime-local" ? localDateTime(field.default) : String(field.default);
    }
    const read = () => {
      const raw = input.value;
      if (input.validity && input.validity.badInput) return { present: true, errors: [`is not a valid ${field.input}`] };
      if (raw === "") return { present: false, errors: [] };
      let value = raw;
      const errors = [];
      if (field.input === "datetime-local") {
        const d = new Date(raw);
        if (Number.isNaN(d.getTime())) return { present: true, errors: ["is not a valid date-time"] };
        value = d.toISOString();
      }
      const length = [...value].length;
      if (typeof field.min_length === "number" && length < field.min_length) errors.push(`needs at least ${field.min_length} characters`);
      if (typeof field.max_length === "number" && length > field.max_length) errors.push(`allows at most ${field.max_length} characters`);
      if (field.input === "email" && !EMAIL.test(value)) errors.push("is not a valid email");
      if (field.input === "url" && !URI.test(value)) errors.push("is not a valid uri");
      if (field.input === "date" && !validDate(value)) errors.push("is not a valid date");
      if (typeof field.pattern === "string") {
        try {
          if (!new RegExp(field.pattern, "u").test(value)) errors.push(`does not match the pattern ${field.pattern}`);
        } catch (e) {
          // a pattern JavaScript cannot read: the kernel decides
        }
      }
      return { present: true, value, errors };
    };
    return { control: input, inputs: [input], read };
  }

  function numberControl(field, id) {
    const input = el("input", "mtj-q-input mtj-q-number");
    input.type = "number";
    input.id = id;
    input.step = field.integer ? "1" : "any";
    if (typeof field.minimum === "number") input.min = String(field.minimum);
    if (typeof field.maximum === "number") input.max = String(field.maximum);
    if (typeof field.default === "number") input.value = String(field.default);
    const read = () => {
      if (input.validity && input.validity.badInput) return { present: true, errors: ["must be a number"] };
      const raw = input.value.trim();
      if (raw === "") return { present: false, errors: [] };
      const value = Number(raw);
      if (!Number.isFinite(value)) return { present: true, errors: ["must be a number"] };
      if (field.integer && !Number.isInteger(value)) return { present: true, errors: ["must be an integer"] };
      const errors = [];
      if (typeof field.minimum === "number" && value < field.minimum) errors.push(`must be at least ${field.minimum}`);
      if (typeof field.maximum === "number" && value > field.maximum) errors.push(`must be at most ${field.maximum}`);
      return { present: true, value, errors };
    };
    return { control: input, inputs: [input], read };
  }

  function booleanControl(field, id) {
    const input = el("input", "mtj-q-check");
    input.type = "checkbox";
    input.id = id;
    input.checked = field.default === true;
    return { control: input, inputs: [input], read: () => ({ present: true, value: input.checked, errors: [] }) };
  }

  function choiceControl(field, id) {
    const options = field.options || [];
    const chosen = options.findIndex(([value]) => "default" in field && same(value, field.default));
    if (field.control === "select") {
      const select = el("select", "mtj-q-select");
      select.id = id;
      if (chosen < 0) {
        const placeholder = el("option", null, "— choose —");
        placeholder.value = "";
        select.append(placeholder);
      }
      options.forEach(([, label], i) => {
        const option = el("option", null, label);
        option.value = String(i);
        select.append(option);
      });
      if (chosen >= 0) select.value = String(chosen);
      const read = () => (select.value === ""
        ? { present: false, errors: [] }
        : { present: true, value: options[Number(select.value)][0], errors: [] });
      return { control: select, inputs: [select], read };
    }
    const group = el("div", "mtj-q-radios");
    group.setAttribute("role", "radiogroup");
    const name = `${id}-radio`;
    const inputs = options.map(([, label], i) => {
      const wrap = el("label", "mtj-q-option");
      const input = el("input");
      input.type = "radio";
      input.name = name;
      input.value = String(i);
      input.checked = i === chosen;
      wrap.append(input, " ", el("span", null, label));
      group.append(wrap);
      return input;
    });
    const read = () => {
      const picked = inputs.findIndex((input) => input.checked);
      return picked < 0 ? { present: false, errors: [] } : { present: true, value: options[picked][0], errors: [] };
    };
    return { control: group, inputs, read, group: true };
  }

  function multiControl(field, id) {
    const options = field.options || [];
    const defaults = Array.isArray(field.default) ? field.default : [];
    const group = el("div", "mtj-q-checks");
    const inputs = options.map(([value, label]) => {
      const wrap = el("label", "mtj-q-option");
      const input = el("input");
      input.type = "checkbox";
      input.checked = defaults.some((d) => same(d, value));
      wrap.append(input, " ", el("span", null, label));
      group.append(wrap);
      return input;
    });
    const read = () => {
      const value = options.filter((_, i) => inputs[i].checked).map(([v]) => v);
      if (!value.length && !field.required) return { present: false, errors: [] };
      const errors = [];
      if (!value.length && field.required) errors.push("is required");
      if (typeof field.min_items === "number" && value.length < field.min_items) errors.push(`choose at least ${field.min_items}`);
      if (typeof field.max_items === "number" && value.length > field.max_items) errors.push(`choose at most ${field.max_items}`);
      return { present: true, value, errors };
    };
    return { control: group, inputs, read, group: true };
  }

  const CONTROLS = { text: textControl, number: numberControl, boolean: booleanControl, choice: choiceControl, multi: multiControl };

  function buildField(field) {
    const id = `mtj-q-field-${++uid}`;
    const make = CONTROLS[field.kind] || textControl;
    const built = make(field, id);
    const row = el(built.group ? "fieldset" : "div", `mtj-q-field mtj-q-kind-${field.kind}`);
    const label = el(built.group ? "legend" : "label", "mtj-q-label", field.label);
    if (!built.group) label.htmlFor = id;
    if (field.required) {
      const mark = el("span", "mtj-q-required", " *");
      mark.title = "required";
      label.append(mark);
    }
    row.dataset.field = field.name;
    if (field.kind === "boolean") {
      const line = el("div", "mtj-q-boolean-line");
      line.append(built.control, " ", label);
      row.append(line);
    } else {
      row.append(label, built.control);
    }
    if (field.description) row.append(el("div", "mtj-q-description", field.description));
    const errors = el("div", "mtj-q-errors");
    errors.hidden = true;
    row.append(errors);
    const read = () => {
      const got = built.read();
      if (!got.present && field.required && !got.errors.length) got.errors = ["is required"];
      return got;
    };
    const showErrors = (list) => {
      errors.replaceChildren(...list.map((text) => el("div", null, text)));
      errors.hidden = !list.length;
      row.classList.toggle("mtj-q-invalid", !!list.length);
    };
    return { row, read, showErrors, inputs: built.inputs, name: field.name };
  }

  // -- one question ---------------------------------------------------------------------------

  function buildForm(entry, send) {
    const box = el("div", "mtj-q");
    box.dataset.question = entry.id;
    const head = el("div", "mtj-q-head", entry.mode === "url" ? "The server asks you to visit a link:" : "The server asks:");
    const message = el("div", "mtj-q-message", entry.message);
    const note = el("div", "mtj-q-note");
    note.hidden = true;
    const general = el("div", "mtj-q-errors mtj-q-general");
    general.hidden = true;
    const status = el("div", "mtj-q-status mtj-muted");
    status.hidden = true;
    const body = el("form", "mtj-q-body");
    body.noValidate = true;
    const fields = [];
    const actions = el("div", "mtj-q-actions");
    let accept;
    if (entry.mode === "url") {
      const link = el("div", "mtj-q-link");
      if (entry.href && isHttp(entry.href)) {
        const a = el("a", null, entry.url);
        a.href = entry.href;
        a.target = "_blank";
        a.rel = "noopener noreferrer";
        link.append(a);
      } else {
        link.append(el("code", null, entry.url), el("span", "mtj-muted", " (not a web link: copy it if you trust it)"));
      }
      body.append(link);
      accept = button("I have completed this", "mtj-q-accept", "tell the server you finished on that page");
    } else {
      for (const field of entry.fields || []) {
        const built = buildField(field);
        fields.push(built);
        body.append(built.row);
      }
      if (!fields.length) body.append(el("div", "mtj-muted", "(nothing to fill in)"));
      accept = button("Accept", "mtj-q-accept", "send these values");
      accept.type = "submit";
    }
    const decline = button("Decline", "mtj-q-decline", "refuse to answer");
    const cancel = button("Cancel", "mtj-q-dismiss", "dismiss the question without answering");
    actions.append(accept, decline, cancel);
    body.append(general, actions, status);
    box.append(head, message, body, note);

    let sending = false;
    let timer = null;
    let shown = null; // the last entry drawn
    const buttons = [accept, decline, cancel];

    function setSending(flag, text) {
      sending = flag;
      for (const b of buttons) b.disabled = flag;
      status.textContent = text || "";
      status.hidden = !text;
      if (timer) clearTimeout(timer);
      timer = flag ? setTimeout(() => setSending(false, "no reply from the kernel yet; you may try again"), RESEND_AFTER_MS) : null;
    }

    function showErrors(byField) {
      const rest = [];
      for (const field of fields) field.showErrors(byField[field.name] || []);
      for (const [name, list] of Object.entries(byField || {})) {
        if (!fields.some((f) => f.name === name)) rest.push(...list.map((text) => (name ? `${name}: ${text}` : text)));
      }
      general.replaceChildren(...rest.map((text) => el("div", null, text)));
      general.hidden = !rest.length;
    }

    function answer(action) {
      if (sending || (shown && shown.state !== "open")) return;
      const message = { type: "answer", id: entry.id, action };
      if (action === "accept" && entry.mode !== "url") {
        const content = {};
        const errors = {};
        for (const field of fields) {
          const got = field.read();
          if (got.errors.length) errors[field.name] = got.errors;
          else if (got.present) content[field.name] = got.value;
        }
        showErrors(errors);
        if (Object.keys(errors).length) return; // nothing is sent
        message.content = content;
      }
      setSending(true, action === "accept" ? "sending…" : `sending ${action}…`);
      send(message);
    }

    body.addEventListener("submit", (event) => {
      event.preventDefault();
      answer("accept");
    });
    // Keys typed in the form belong to the form, not to the notebook's shortcuts (JupyterLab
    // would take Enter as "edit the cell"); Enter in a field sends the form.
    const stopKeys = (event) => {
      const tag = event.target && event.target.tagName;
      if (tag !== "INPUT" && tag !== "SELECT" && tag !== "TEXTAREA" && tag !== "BUTTON") return;
      event.stopPropagation();
      if (event.type === "keydown" && event.key === "Enter" && tag === "INPUT" && !event.isComposing) {
        event.preventDefault();
        answer("accept");
      }
    };
    box.addEventListener("keydown", stopKeys);
    box.addEventListener("keypress", stopKeys);
    if (entry.mode === "url") accept.addEventListener("click", () => answer("accept"));
    decline.addEventListener("click", () => answer("decline"));
    cancel.addEventListener("click", () => answer("cancel"));

    function update(next) {
      const before = shown;
      shown = next;
      if (next.state !== "open") {
        setSending(false);
        box.classList.add("mtj-q-closed");
        box.classList.toggle("mtj-q-withdrawn", next.state === "withdrawn");
        body.hidden = true;
        for (const field of fields) for (const input of field.inputs) input.disabled = true;
        head.textContent = next.state === "withdrawn" ? "Question closed:" : "Question answered:";
        note.textContent = next.note;
        note.hidden = !next.note;
        return;
      }
      if (!before || before.attempts !== next.attempts) {
        // The kernel refused a submission (or this is the first drawing): show its errors.
        if (before) setSending(false);
        showErrors(next.errors || {});
      }
    }

    return { box, update, entry: () => shown };
  }

  // -- the list of questions of one widget ---------------------------------------------------

  function questionsView(model) {
    const root = el("div", "mtj-questions");
    root.hidden = true;
    const forms = new Map();
    function update() {
      const entries = model.get("questions") || [];
      const seen = new Set();
      entries.forEach((entry, i) => {
        let form = forms.get(entry.id);
        if (!form) {
          form = buildForm(entry, (message) => model.send(message));
          forms.set(entry.id, form);
        }
        if (form.entry() !== entry) form.update(entry);
        seen.add(entry.id);
        if (root.children[i] !== form.box) root.insertBefore(form.box, root.children[i] || null);
      });
      for (const [id, form] of forms) {
        if (!seen.has(id)) {
          form.box.remove();
          forms.delete(id);
        }
      }
      root.hidden = !entries.length;
    }
    // The messages of the questions open now (the task view leaves out their "waiting" line).
    const openMessages = () => new Set((model.get("questions") || []).filter((q) => q.state === "open").map((q) => q.message));
    return { root, update, openMessages };
  }

  return { questionsView, isHttp };
})();
