/**
 * Question forms (elicitation), drawn from a widget's `questions` trait (see
 * `question_form.py` for the data). Shared by the task widget and the
 * standalone question widget. Everything from the server is set with
 * `textContent` or as a DOM property, never as HTML. The checks here only give
 * quick feedback; the kernel checks every answer again and refuses one that
 * does not fit, showing its errors in the form.
 */

import type { IWidgetModel } from './anywidget';
import { button, h } from './dom';

/** A value of the form's JSON (a choice's value, a default). */
export type JsonValue = unknown;

interface IFieldBase {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly required: boolean;
  /** Present only when the schema's default fits the field. */
  readonly default?: JsonValue;
}

export type TextInput = 'text' | 'email' | 'url' | 'date' | 'datetime-local';

export interface ITextField extends IFieldBase {
  readonly kind: 'text';
  readonly input: TextInput;
  readonly min_length: number | null;
  readonly max_length: number | null;
  readonly pattern: string | null;
}

export interface INumberField extends IFieldBase {
  readonly kind: 'number';
  readonly integer: boolean;
  readonly minimum: number | null;
  readonly maximum: number | null;
}

export interface IBooleanField extends IFieldBase {
  readonly kind: 'boolean';
}

/** `[value, label]`. */
export type Option = readonly [JsonValue, string];

export interface IChoiceField extends IFieldBase {
  readonly kind: 'choice';
  readonly options: readonly Option[];
  readonly control: 'radio' | 'select';
}

export interface IMultiField extends IFieldBase {
  readonly kind: 'multi';
  readonly options: readonly Option[];
  readonly min_items: number | null;
  readonly max_items: number | null;
}

export type Field =
  ITextField | INumberField | IBooleanField | IChoiceField | IMultiField;

export type QuestionState = 'open' | 'answered' | 'withdrawn';

/** One entry of the `questions` trait: the form, its state and this widget's errors. */
export interface IQuestionEntry {
  readonly id: string;
  readonly mode: 'form' | 'url';
  readonly message: string;
  readonly fields: readonly Field[];
  readonly url: string | null;
  /** The URL when it is an http(s) link (checked by the kernel too). */
  readonly href: string | null;
  readonly state: QuestionState;
  readonly note: string;
  /** Errors of the last refused submission, by field name ("" for the form). */
  readonly errors: Readonly<Record<string, readonly string[]>>;
  /** Refused submissions so far: a new count means new errors to show. */
  readonly attempts: number;
}

export interface IQuestionsState {
  questions: IQuestionEntry[];
}

export type Action = 'accept' | 'decline' | 'cancel';

/** What a form sends to the kernel. */
export interface IAnswerMessage {
  type: 'answer';
  id: string;
  action: Action;
  content?: Record<string, JsonValue>;
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
const URI = /^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Buttons come back if the kernel never answers a submission. */
export const RESEND_AFTER_MS = 10000;
let uid = 0;

export function isHttp(url: unknown): boolean {
  return typeof url === 'string' && /^https?:\/\/[^\s/?#]+[^\s]*$/i.test(url);
}

function same(a: JsonValue, b: JsonValue): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** An ISO date-time as a `datetime-local` input's value, in local time; "" if it is none. */
export function localDateTime(iso: unknown): string {
  const d = new Date(iso as string);
  if (typeof iso !== 'string' || Number.isNaN(d.getTime())) {
    return '';
  }
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** `YYYY-MM-DD` naming a day that exists. */
export function validDate(text: string): boolean {
  if (!DATE.test(text)) {
    return false;
  }
  const [y, m, d] = text.split('-').map(Number);
  const date = new Date(Date.UTC(y, m - 1, d));
  return (
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === m - 1 &&
    date.getUTCDate() === d
  );
}

// -- one field: a row with its control, and read() -> {present, value, errors}

interface IReading {
  present: boolean;
  value?: JsonValue;
  errors: string[];
}

interface IControl {
  control: HTMLElement;
  inputs: (HTMLInputElement | HTMLSelectElement)[];
  read: () => IReading;
  /** Drawn as a fieldset with a legend (radios, checkboxes). */
  group?: boolean;
}

function textControl(field: ITextField, id: string): IControl {
  const input = h('input', 'mtj-q-input');
  input.type = field.input || 'text';
  input.id = id;
  if (typeof field.max_length === 'number') {
    input.maxLength = field.max_length;
  }
  if (typeof field.min_length === 'number') {
    input.minLength = field.min_length;
  }
  if ('default' in field) {
    input.value =
      field.input === 'datetime-local'
        ? localDateTime(field.default)
        : String(field.default);
  }
  const read = (): IReading => {
    const raw = input.value;
    if (input.validity && input.validity.badInput) {
      return { present: true, errors: [`is not a valid ${field.input}`] };
    }
    if (raw === '') {
      return { present: false, errors: [] };
    }
    let value = raw;
    const errors: string[] = [];
    if (field.input === 'datetime-local') {
      const d = new Date(raw);
      if (Number.isNaN(d.getTime())) {
        return { present: true, errors: ['is not a valid date-time'] };
      }
      value = d.toISOString();
    }
    const length = [...value].length;
    if (typeof field.min_length === 'number' && length < field.min_length) {
      errors.push(`needs at least ${field.min_length} characters`);
    }
    if (typeof field.max_length === 'number' && length > field.max_length) {
      errors.push(`allows at most ${field.max_length} characters`);
    }
    if (field.input === 'email' && !EMAIL.test(value)) {
      errors.push('is not a valid email');
    }
    if (field.input === 'url' && !URI.test(value)) {
      errors.push('is not a valid uri');
    }
    if (field.input === 'date' && !validDate(value)) {
      errors.push('is not a valid date');
    }
    if (typeof field.pattern === 'string') {
      try {
        if (!new RegExp(field.pattern, 'u').test(value)) {
          errors.push(`does not match the pattern ${field.pattern}`);
        }
      } catch {
        // a pattern JavaScript cannot read: the kernel decides
      }
    }
    return { present: true, value, errors };
  };
  return { control: input, inputs: [input], read };
}

function numberControl(field: INumberField, id: string): IControl {
  const input = h('input', 'mtj-q-input mtj-q-number');
  input.type = 'number';
  input.id = id;
  input.step = field.integer ? '1' : 'any';
  if (typeof field.minimum === 'number') {
    input.min = String(field.minimum);
  }
  if (typeof field.maximum === 'number') {
    input.max = String(field.maximum);
  }
  if (typeof field.default === 'number') {
    input.value = String(field.default);
  }
  const read = (): IReading => {
    if (input.validity && input.validity.badInput) {
      return { present: true, errors: ['must be a number'] };
    }
    const raw = input.value.trim();
    if (raw === '') {
      return { present: false, errors: [] };
    }
    const value = Number(raw);
    if (!Number.isFinite(value)) {
      return { present: true, errors: ['must be a number'] };
    }
    if (field.integer && !Number.isInteger(value)) {
      return { present: true, errors: ['must be an integer'] };
    }
    const errors: string[] = [];
    if (typeof field.minimum === 'number' && value < field.minimum) {
      errors.push(`must be at least ${field.minimum}`);
    }
    if (typeof field.maximum === 'number' && value > field.maximum) {
      errors.push(`must be at most ${field.maximum}`);
    }
    return { present: true, value, errors };
  };
  return { control: input, inputs: [input], read };
}

function booleanControl(field: IBooleanField, id: string): IControl {
  const input = h('input', 'mtj-q-check');
  input.type = 'checkbox';
  input.id = id;
  input.checked = field.default === true;
  return {
    control: input,
    inputs: [input],
    read: () => ({ present: true, value: input.checked, errors: [] })
  };
}

function choiceControl(field: IChoiceField, id: string): IControl {
  const options = field.options || [];
  const chosen = options.findIndex(
    ([value]) => 'default' in field && same(value, field.default)
  );
  if (field.control === 'select') {
    const select = h('select', 'mtj-q-select');
    select.id = id;
    if (chosen < 0) {
      const placeholder = h('option', null, '— choose —');
      placeholder.value = '';
      select.append(placeholder);
    }
    options.forEach(([, label], i) => {
      const option = h('option', null, label);
      option.value = String(i);
      select.append(option);
    });
    if (chosen >= 0) {
      select.value = String(chosen);
    }
    const read = (): IReading =>
      select.value === ''
        ? { present: false, errors: [] }
        : {
            present: true,
            value: options[Number(select.value)][0],
            errors: []
          };
    return { control: select, inputs: [select], read };
  }
  const group = h('div', 'mtj-q-radios');
  group.setAttribute('role', 'radiogroup');
  const name = `${id}-radio`;
  const inputs = options.map(([, label], i) => {
    const wrap = h('label', 'mtj-q-option');
    const input = h('input');
    input.type = 'radio';
    input.name = name;
    input.value = String(i);
    input.checked = i === chosen;
    wrap.append(input, ' ', h('span', null, label));
    group.append(wrap);
    return input;
  });
  const read = (): IReading => {
    const picked = inputs.findIndex(input => input.checked);
    return picked < 0
      ? { present: false, errors: [] }
      : { present: true, value: options[picked][0], errors: [] };
  };
  return { control: group, inputs, read, group: true };
}

function multiControl(field: IMultiField): IControl {
  const options = field.options || [];
  const defaults: readonly JsonValue[] = Array.isArray(field.default)
    ? field.default
    : [];
  const group = h('div', 'mtj-q-checks');
  const inputs = options.map(([value, label]) => {
    const wrap = h('label', 'mtj-q-option');
    const input = h('input');
    input.type = 'checkbox';
    input.checked = defaults.some(d => same(d, value));
    wrap.append(input, ' ', h('span', null, label));
    group.append(wrap);
    return input;
  });
  const read = (): IReading => {
    const value = options.filter((_, i) => inputs[i].checked).map(([v]) => v);
    if (!value.length && !field.required) {
      return { present: false, errors: [] };
    }
    const errors: string[] = [];
    if (!value.length && field.required) {
      errors.push(required(field));
    }
    if (typeof field.min_items === 'number' && value.length < field.min_items) {
      errors.push(`choose at least ${field.min_items}`);
    }
    if (typeof field.max_items === 'number' && value.length > field.max_items) {
      errors.push(`choose at most ${field.max_items}`);
    }
    return { present: true, value, errors };
  };
  return { control: group, inputs, read, group: true };
}

/** "Topic is required": the field named, so the message reads alone (a screen reader, a summary). */
function required(field: Field): string {
  return `${field.label} is required`;
}

function makeControl(field: Field, id: string): IControl {
  switch (field.kind) {
    case 'number':
      return numberControl(field, id);
    case 'boolean':
      return booleanControl(field, id);
    case 'choice':
      return choiceControl(field, id);
    case 'multi':
      return multiControl(field);
    default:
      // text, or a kind this front end does not know: a text box
      return textControl(field, id);
  }
}

interface IBuiltField {
  row: HTMLElement;
  read: () => IReading;
  showErrors: (list: readonly string[]) => void;
  inputs: (HTMLInputElement | HTMLSelectElement)[];
  name: string;
}

function buildField(field: Field): IBuiltField {
  const id = `mtj-q-field-${++uid}`;
  const built = makeControl(field, id);
  const row = h(
    built.group ? 'fieldset' : 'div',
    `mtj-q-field mtj-q-kind-${field.kind}`
  );
  const label = h(built.group ? 'legend' : 'label', 'mtj-q-label', field.label);
  if (!built.group) {
    (label as HTMLLabelElement).htmlFor = id;
  }
  if (field.required) {
    const mark = h('span', 'mtj-q-required', ' *');
    mark.title = 'required';
    label.append(mark);
  }
  row.dataset.field = field.name;
  if (field.kind === 'boolean') {
    const line = h('div', 'mtj-q-boolean-line');
    line.append(built.control, ' ', label);
    row.append(line);
  } else {
    row.append(label, built.control);
  }
  if (field.description) {
    row.append(h('div', 'mtj-q-description', field.description));
  }
  const errors = h('div', 'mtj-q-errors');
  errors.hidden = true;
  row.append(errors);
  const read = (): IReading => {
    const got = built.read();
    if (!got.present && field.required && !got.errors.length) {
      got.errors = [required(field)];
    }
    return got;
  };
  const showErrors = (list: readonly string[]): void => {
    errors.replaceChildren(...list.map(text => h('div', null, text)));
    errors.hidden = !list.length;
    row.classList.toggle('mtj-q-invalid', !!list.length);
  };
  return { row, read, showErrors, inputs: built.inputs, name: field.name };
}

// -- one question --------------------------------------------------------------

interface IForm {
  box: HTMLElement;
  update: (next: IQuestionEntry) => void;
  /** The last entry drawn. */
  entry: () => IQuestionEntry | null;
}

function buildForm(
  entry: IQuestionEntry,
  send: (message: IAnswerMessage) => void
): IForm {
  const box = h('div', 'mtj-q');
  box.dataset.question = entry.id;
  const head = h(
    'div',
    'mtj-q-head',
    entry.mode === 'url'
      ? 'The server asks you to visit a link:'
      : 'The server asks:'
  );
  const message = h('div', 'mtj-q-message', entry.message);
  const note = h('div', 'mtj-q-note');
  note.hidden = true;
  const general = h('div', 'mtj-q-errors mtj-q-general');
  general.hidden = true;
  const status = h('div', 'mtj-q-status mtj-muted');
  status.hidden = true;
  const body = h('form', 'mtj-q-body');
  body.noValidate = true;
  const fields: IBuiltField[] = [];
  const actions = h('div', 'mtj-q-actions');
  let accept: HTMLButtonElement;
  if (entry.mode === 'url') {
    const link = h('div', 'mtj-q-link');
    if (entry.href && isHttp(entry.href)) {
      const a = h('a', null, entry.url);
      a.href = entry.href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      link.append(a);
    } else {
      link.append(
        h('code', null, entry.url),
        h('span', 'mtj-muted', ' (not a web link: copy it if you trust it)')
      );
    }
    body.append(link);
    accept = button(
      'I have completed this',
      'mtj-q-button mtj-q-accept jp-Button jp-mod-styled jp-mod-accept',
      'tell the server you finished on that page'
    );
  } else {
    for (const field of entry.fields || []) {
      const built = buildField(field);
      fields.push(built);
      body.append(built.row);
    }
    if (!fields.length) {
      body.append(h('div', 'mtj-muted', '(nothing to fill in)'));
    }
    accept = button(
      'Accept',
      'mtj-q-button mtj-q-accept jp-Button jp-mod-styled jp-mod-accept',
      'send these values'
    );
    accept.type = 'submit';
  }
  const decline = button(
    'Decline',
    'mtj-q-button mtj-q-decline jp-Button jp-mod-styled jp-mod-reject',
    'refuse to answer'
  );
  const cancel = button(
    'Cancel',
    'mtj-q-button mtj-q-dismiss jp-Button jp-mod-styled',
    'dismiss the question without answering'
  );
  // Distinct from the task's own Cancel (which cancels the task on the server).
  cancel.setAttribute('aria-label', 'Cancel the question');
  actions.append(accept, decline, cancel);
  body.append(general, actions, status);
  box.append(head, message, body, note);

  let sending = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let shown: IQuestionEntry | null = null;
  const buttons = [accept, decline, cancel];

  function setSending(flag: boolean, text?: string): void {
    sending = flag;
    for (const b of buttons) {
      b.disabled = flag;
    }
    status.textContent = text || '';
    status.hidden = !text;
    if (timer) {
      clearTimeout(timer);
    }
    timer = flag
      ? setTimeout(
          () =>
            setSending(
              false,
              'no reply from the kernel yet; you may try again'
            ),
          RESEND_AFTER_MS
        )
      : null;
  }

  function showErrors(
    byField: Readonly<Record<string, readonly string[]>>
  ): void {
    const rest: string[] = [];
    for (const field of fields) {
      field.showErrors(byField[field.name] || []);
    }
    for (const [name, list] of Object.entries(byField || {})) {
      if (!fields.some(f => f.name === name)) {
        rest.push(...list.map(text => (name ? `${name}: ${text}` : text)));
      }
    }
    general.replaceChildren(...rest.map(text => h('div', null, text)));
    general.hidden = !rest.length;
  }

  function answer(action: Action): void {
    if (sending || (shown && shown.state !== 'open')) {
      return;
    }
    const message: IAnswerMessage = { type: 'answer', id: entry.id, action };
    if (action === 'accept' && entry.mode !== 'url') {
      const content: Record<string, JsonValue> = {};
      const errors: Record<string, string[]> = {};
      for (const field of fields) {
        const got = field.read();
        if (got.errors.length) {
          errors[field.name] = got.errors;
        } else if (got.present) {
          content[field.name] = got.value;
        }
      }
      showErrors(errors);
      if (Object.keys(errors).length) {
        return; // nothing is sent
      }
      message.content = content;
    }
    setSending(true, action === 'accept' ? 'sending…' : `sending ${action}…`);
    send(message);
  }

  body.addEventListener('submit', event => {
    event.preventDefault();
    answer('accept');
  });
  // Keys typed in the form belong to the form, not to the notebook's shortcuts
  // (JupyterLab would take Enter as "edit the cell"); Enter in a field sends the form.
  const stopKeys = (event: KeyboardEvent): void => {
    const tag = (event.target as HTMLElement | null)?.tagName;
    if (
      tag !== 'INPUT' &&
      tag !== 'SELECT' &&
      tag !== 'TEXTAREA' &&
      tag !== 'BUTTON'
    ) {
      return;
    }
    event.stopPropagation();
    if (
      event.type === 'keydown' &&
      event.key === 'Enter' &&
      tag === 'INPUT' &&
      !event.isComposing
    ) {
      event.preventDefault();
      answer('accept');
    }
  };
  box.addEventListener('keydown', stopKeys);
  box.addEventListener('keypress', stopKeys);
  if (entry.mode === 'url') {
    accept.addEventListener('click', () => answer('accept'));
  }
  decline.addEventListener('click', () => answer('decline'));
  cancel.addEventListener('click', () => answer('cancel'));

  function update(next: IQuestionEntry): void {
    const before = shown;
    shown = next;
    if (next.state !== 'open') {
      setSending(false);
      box.classList.add('mtj-q-closed');
      box.classList.toggle('mtj-q-withdrawn', next.state === 'withdrawn');
      body.hidden = true;
      for (const field of fields) {
        for (const input of field.inputs) {
          input.disabled = true;
        }
      }
      head.textContent =
        next.state === 'withdrawn' ? 'Question closed:' : 'Question answered:';
      note.textContent = next.note;
      note.hidden = !next.note;
      return;
    }
    if (!before || before.attempts !== next.attempts) {
      // The kernel refused a submission (or this is the first drawing): show its errors.
      if (before) {
        setSending(false);
      }
      showErrors(next.errors || {});
    }
  }

  return { box, update, entry: () => shown };
}

// -- the list of questions of one widget ---------------------------------------

export interface IQuestionsView {
  root: HTMLElement;
  /** Redraw from the model's `questions`. */
  update: () => void;
  /** The messages of the questions open now (the task view leaves out their "waiting" line). */
  openMessages: () => Set<string>;
}

export function questionsView<State extends IQuestionsState>(
  model: IWidgetModel<State>
): IQuestionsView {
  const root = h('div', 'mtj-questions');
  root.hidden = true;
  const forms = new Map<string, IForm>();
  const entries = (): readonly IQuestionEntry[] => model.get('questions') || [];
  function update(): void {
    const list = entries();
    const seen = new Set<string>();
    list.forEach((entry, i) => {
      let form = forms.get(entry.id);
      if (!form) {
        form = buildForm(entry, message => model.send(message));
        forms.set(entry.id, form);
      }
      if (form.entry() !== entry) {
        form.update(entry);
      }
      seen.add(entry.id);
      if (root.children[i] !== form.box) {
        root.insertBefore(form.box, root.children[i] || null);
      }
    });
    for (const [id, form] of forms) {
      if (!seen.has(id)) {
        form.box.remove();
        forms.delete(id);
      }
    }
    root.hidden = !list.length;
  }
  const openMessages = (): Set<string> =>
    new Set(
      entries()
        .filter(q => q.state === 'open')
        .map(q => q.message)
    );
  return { root, update, openMessages };
}
