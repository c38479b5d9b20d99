import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import {
  type Field,
  type IQuestionEntry,
  type IQuestionsState,
  isHttp,
  localDateTime,
  questionsView,
  RESEND_AFTER_MS,
  validDate
} from '../src/widgets/form';
import question from '../src/widgets/question';
import { FakeModel, mount, one, texts } from './fake-model';

function entry(patch: Partial<IQuestionEntry> = {}): IQuestionEntry {
  return {
    id: 'q1',
    mode: 'form',
    message: 'Which topic?',
    fields: [],
    url: null,
    href: null,
    state: 'open',
    note: '',
    errors: {},
    attempts: 0,
    ...patch
  };
}

const base = { description: '', required: false } as const;
const TEXT: Field = {
  ...base,
  name: 'topic',
  label: 'Topic',
  kind: 'text',
  input: 'text',
  min_length: 2,
  max_length: 5,
  pattern: '^[a-z]+$',
  required: true,
  description: 'what to research'
};
const NUMBER: Field = {
  ...base,
  name: 'depth',
  label: 'depth',
  kind: 'number',
  integer: true,
  minimum: 1,
  maximum: 3
};
const FLAG: Field = {
  ...base,
  name: 'ok',
  label: 'ok',
  kind: 'boolean',
  default: true
};
const RADIO: Field = {
  ...base,
  name: 'size',
  label: 'size',
  kind: 'choice',
  control: 'radio',
  options: [
    ['s', 'small'],
    [{ big: true }, 'large']
  ],
  default: { big: true }
};
const SELECT: Field = {
  ...base,
  name: 'pick',
  label: 'pick',
  kind: 'choice',
  control: 'select',
  options: [
    [1, 'one'],
    [2, 'two']
  ]
};
const MULTI: Field = {
  ...base,
  name: 'tags',
  label: 'tags',
  kind: 'multi',
  options: [
    ['x', 'X'],
    ['y', 'Y'],
    ['z', 'Z']
  ],
  min_items: 1,
  max_items: 2,
  default: ['x']
};

/** A view of `questions` alone, as the task widget holds one. */
function view(entries: IQuestionEntry[]): {
  model: FakeModel<IQuestionsState>;
  root: HTMLElement;
  update: () => void;
  openMessages: () => Set<string>;
} {
  const model = new FakeModel<IQuestionsState>({ questions: entries });
  const questions = questionsView(model);
  document.body.append(questions.root);
  questions.update();
  return { model, ...questions };
}

function field(root: ParentNode, name: string): HTMLElement {
  return one(root, `[data-field="${name}"]`);
}

function type(input: HTMLInputElement, value: string): void {
  input.value = value;
}

describe('form helpers', () => {
  it('knows a web link', () => {
    expect(isHttp('https://example.org/a?b')).toBe(true);
    expect(isHttp('HTTP://x')).toBe(true);
    for (const url of [
      'javascript:alert(1)',
      'https://',
      'http://a b',
      'ftp://x',
      42
    ]) {
      expect(isHttp(url)).toBe(false);
    }
  });

  it('checks days that exist', () => {
    expect(validDate('2024-02-29')).toBe(true);
    expect(validDate('2023-02-29')).toBe(false);
    expect(validDate('2026-1-31')).toBe(false);
  });

  it('shows an ISO date-time in local time, or nothing', () => {
    const iso = '2026-01-31T12:34:00Z';
    const d = new Date(iso);
    expect(localDateTime(iso)).toBe(
      `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}T${String(d.getHours()).padStart(2, '0')}:34`
    );
    expect(localDateTime('not a date')).toBe('');
    expect(localDateTime(12)).toBe('');
  });
});

describe('question forms', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('draws each kind of field with its defaults', () => {
    const { root } = view([
      entry({ fields: [TEXT, NUMBER, FLAG, RADIO, SELECT, MULTI] })
    ]);
    expect(root.hidden).toBe(false);
    expect(one(root, '.mtj-q-head').textContent).toBe('The server asks:');
    expect(one(root, '.mtj-q-message').textContent).toBe('Which topic?');
    const text = one<HTMLInputElement>(field(root, 'topic'), 'input');
    expect([text.type, text.minLength, text.maxLength]).toEqual(['text', 2, 5]);
    expect(one(field(root, 'topic'), 'label').textContent).toBe('Topic *');
    expect(one<HTMLLabelElement>(field(root, 'topic'), 'label').htmlFor).toBe(
      text.id
    );
    expect(one(field(root, 'topic'), '.mtj-q-description').textContent).toBe(
      'what to research'
    );
    const number = one<HTMLInputElement>(field(root, 'depth'), 'input');
    expect([number.type, number.step, number.min, number.max]).toEqual([
      'number',
      '1',
      '1',
      '3'
    ]);
    expect(one<HTMLInputElement>(field(root, 'ok'), 'input').checked).toBe(
      true
    );
    expect(field(root, 'size').tagName).toBe('FIELDSET');
    expect(one(field(root, 'size'), 'legend').textContent).toBe('size');
    const radios = field(root, 'size').querySelectorAll<HTMLInputElement>(
      'input[type=radio]'
    );
    expect([...radios].map(r => r.checked)).toEqual([false, true]);
    expect(texts(field(root, 'pick'), 'option')).toEqual([
      '— choose —',
      'one',
      'two'
    ]);
    const checks = field(root, 'tags').querySelectorAll<HTMLInputElement>(
      'input'
    );
    expect([...checks].map(c => c.checked)).toEqual([true, false, false]);
  });

  it('sends the values that fit, with their JSON types', () => {
    const { root, model } = view([
      entry({ fields: [TEXT, NUMBER, FLAG, RADIO, SELECT, MULTI] })
    ]);
    type(one(field(root, 'topic'), 'input'), 'tide');
    type(one(field(root, 'depth'), 'input'), '2');
    const select = one<HTMLSelectElement>(field(root, 'pick'), 'select');
    select.value = '1';
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    expect(model.sent).toEqual([
      {
        type: 'answer',
        id: 'q1',
        action: 'accept',
        content: {
          topic: 'tide',
          depth: 2,
          ok: true,
          size: { big: true },
          pick: 2,
          tags: ['x']
        }
      }
    ]);
    expect(one(root, '.mtj-q-status').textContent).toBe('sending…');
    const buttons = root.querySelectorAll<HTMLButtonElement>('.mtj-q-button');
    expect([...buttons].every(b => b.disabled)).toBe(true);
  });

  it('sends nothing while a value does not fit, and says why by field', () => {
    const { root, model } = view([entry({ fields: [TEXT, NUMBER, MULTI] })]);
    type(one(field(root, 'depth'), 'input'), '2.5');
    one<HTMLInputElement>(field(root, 'tags'), 'input').checked = false;
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    expect(model.sent).toEqual([]);
    expect(texts(field(root, 'topic'), '.mtj-q-errors div')).toEqual([
      'Topic is required' // the field named: the message reads alone (issue 30)
    ]);
    expect(texts(field(root, 'depth'), '.mtj-q-errors div')).toEqual([
      'must be an integer'
    ]);
    expect(field(root, 'depth').classList.contains('mtj-q-invalid')).toBe(true);
    // tags is optional: none chosen is no value at all
    expect(field(root, 'tags').classList.contains('mtj-q-invalid')).toBe(false);

    type(one(field(root, 'topic'), 'input'), 'Toolong1');
    type(one(field(root, 'depth'), 'input'), '9');
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    expect(texts(field(root, 'topic'), '.mtj-q-errors div')).toEqual([
      'allows at most 5 characters',
      'does not match the pattern ^[a-z]+$'
    ]);
    expect(texts(field(root, 'depth'), '.mtj-q-errors div')).toEqual([
      'must be at most 3'
    ]);
    expect(model.sent).toEqual([]);
  });

  it('checks emails, links, dates and date-times', () => {
    const fields: Field[] = (
      ['email', 'url', 'date', 'datetime-local'] as const
    ).map(input => ({
      ...base,
      name: input,
      label: input,
      kind: 'text',
      input,
      min_length: null,
      max_length: null,
      pattern: null
    }));
    const { root, model } = view([entry({ fields })]);
    type(one(field(root, 'email'), 'input'), 'not-an-email');
    type(one(field(root, 'url'), 'input'), 'no scheme');
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    expect(texts(root, '.mtj-q-errors div')).toEqual([
      'is not a valid email',
      'is not a valid uri'
    ]);
    type(one(field(root, 'email'), 'input'), 'a@b.example');
    type(one(field(root, 'url'), 'input'), 'https://x.example');
    type(one(field(root, 'date'), 'input'), '2026-01-31');
    type(one(field(root, 'datetime-local'), 'input'), '2026-01-31T12:30');
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    expect(model.sent).toHaveLength(1);
    const content = (model.sent[0] as { content: Record<string, string> })
      .content;
    expect(content.email).toBe('a@b.example');
    expect(content.date).toBe('2026-01-31');
    expect(content['datetime-local']).toBe(
      new Date('2026-01-31T12:30').toISOString()
    );
  });

  it('declines and dismisses without reading the fields', () => {
    const { root, model } = view([entry({ fields: [TEXT] })]);
    one<HTMLButtonElement>(root, '.mtj-q-decline').click();
    expect(model.sent).toEqual([
      { type: 'answer', id: 'q1', action: 'decline' }
    ]);
    expect(one(root, '.mtj-q-status').textContent).toBe('sending decline…');
    one<HTMLButtonElement>(root, '.mtj-q-dismiss').click(); // disabled while sending
    expect(model.sent).toHaveLength(1);
  });

  it('gives the buttons back when the kernel never answers', () => {
    const { root, model } = view([entry()]);
    one<HTMLButtonElement>(root, '.mtj-q-dismiss').click();
    expect(model.sent).toEqual([
      { type: 'answer', id: 'q1', action: 'cancel' }
    ]);
    vi.advanceTimersByTime(RESEND_AFTER_MS);
    expect(one<HTMLButtonElement>(root, '.mtj-q-dismiss').disabled).toBe(false);
    expect(one(root, '.mtj-q-status').textContent).toBe(
      'no reply from the kernel yet; you may try again'
    );
  });

  it('shows the errors of a submission the kernel refused', () => {
    const { root, model, update } = view([entry({ fields: [TEXT] })]);
    type(one(field(root, 'topic'), 'input'), 'tide');
    one<HTMLButtonElement>(root, '.mtj-q-accept').click();
    model.set('questions', [
      entry({
        fields: [TEXT],
        attempts: 1,
        errors: { topic: ['is taken'], '': ['try later'], other: ['odd'] }
      })
    ]);
    update();
    expect(texts(field(root, 'topic'), '.mtj-q-errors div')).toEqual([
      'is taken'
    ]);
    expect(texts(root, '.mtj-q-general div')).toEqual([
      'try later',
      'other: odd'
    ]);
    expect(one<HTMLButtonElement>(root, '.mtj-q-accept').disabled).toBe(false);
    expect(one(root, '.mtj-q-status').hidden).toBe(true);
  });

  it('closes when answered or withdrawn, and ignores late clicks', () => {
    const { root, model, update, openMessages } = view([
      entry({ fields: [TEXT] })
    ]);
    expect(openMessages()).toEqual(new Set(['Which topic?']));
    model.set('questions', [
      entry({ fields: [TEXT], state: 'withdrawn', note: 'the task ended' })
    ]);
    update();
    const box = one(root, '.mtj-q');
    expect(box.classList.contains('mtj-q-closed')).toBe(true);
    expect(box.classList.contains('mtj-q-withdrawn')).toBe(true);
    expect(one(root, '.mtj-q-head').textContent).toBe('Question closed:');
    expect(one(root, '.mtj-q-note').textContent).toBe('the task ended');
    expect(one(root, '.mtj-q-body').hidden).toBe(true);
    expect(one<HTMLInputElement>(field(root, 'topic'), 'input').disabled).toBe(
      true
    );
    one<HTMLButtonElement>(root, '.mtj-q-decline').click();
    expect(model.sent).toEqual([]);
    expect(openMessages()).toEqual(new Set());
  });

  it('keeps a form across redraws and follows the order of the list', () => {
    const { root, model, update } = view([
      entry({ id: 'a' }),
      entry({ id: 'b' })
    ]);
    const [a, b] = root.querySelectorAll('.mtj-q');
    model.set('questions', [entry({ id: 'b' }), entry({ id: 'c' })]);
    update();
    const boxes = [...root.querySelectorAll<HTMLElement>('.mtj-q')];
    expect(boxes.map(x => x.dataset.question)).toEqual(['b', 'c']);
    expect(boxes[0]).toBe(b);
    expect(a.isConnected).toBe(false);
    model.set('questions', []);
    update();
    expect(root.hidden).toBe(true);
  });

  it('draws a URL question as a link only for http(s)', () => {
    const { root, model } = view([
      entry({
        id: 'web',
        mode: 'url',
        url: 'https://x.example/ok',
        href: 'https://x.example/ok'
      }),
      entry({
        id: 'js',
        mode: 'url',
        url: 'javascript:alert(1)',
        href: 'javascript:alert(1)'
      })
    ]);
    const [web, js] = root.querySelectorAll<HTMLElement>('.mtj-q');
    expect(one(web, '.mtj-q-head').textContent).toBe(
      'The server asks you to visit a link:'
    );
    expect(one<HTMLAnchorElement>(web, 'a').href).toBe('https://x.example/ok');
    expect(one<HTMLAnchorElement>(web, 'a').target).toBe('_blank');
    expect(js.querySelector('a')).toBeNull();
    expect(one(js, 'code').textContent).toBe('javascript:alert(1)');
    one<HTMLButtonElement>(web, '.mtj-q-accept').click();
    expect(model.sent).toEqual([
      { type: 'answer', id: 'web', action: 'accept' }
    ]);
  });

  it('keeps keys typed in the form from the notebook; Enter in a field sends it', () => {
    const { root, model } = view([
      entry({ fields: [{ ...TEXT, required: false }] })
    ]);
    const input = one<HTMLInputElement>(field(root, 'topic'), 'input');
    let reached = 0;
    document.body.addEventListener('keydown', () => reached++);
    input.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'a', bubbles: true })
    );
    expect(reached).toBe(0);
    one(root, '.mtj-q').dispatchEvent(
      new KeyboardEvent('keydown', { key: 'a', bubbles: true })
    );
    expect(reached).toBe(1); // not from a control: the notebook's
    input.dispatchEvent(
      new KeyboardEvent('keydown', { key: 'Enter', bubbles: true })
    );
    expect(model.sent).toEqual([
      { type: 'answer', id: 'q1', action: 'accept', content: {} }
    ]);
  });

  it('writes everything from the server as text', () => {
    const evil = '<img src=x onerror=alert(1)>';
    const { root } = view([
      entry({
        message: evil,
        fields: [
          {
            ...TEXT,
            name: evil,
            label: evil,
            description: evil,
            default: evil
          },
          { ...RADIO, options: [[evil, evil]] }
        ]
      })
    ]);
    expect(root.querySelector('img')).toBeNull();
    expect(one(root, '.mtj-q-message').textContent).toBe(evil);
    expect(one<HTMLInputElement>(root, '.mtj-q-input').value).toBe(evil);
  });
});

describe('question widget', () => {
  afterEach(() => document.body.replaceChildren());

  it('says which server asks and draws its forms', () => {
    const { el, model, cleanup } = mount(question, {
      questions: [entry()],
      server: ''
    });
    expect(one(el, '.mtj-question-widget > .mtj-muted').textContent).toBe(
      'question from the server'
    );
    model.set('server', 'demo');
    expect(one(el, '.mtj-question-widget > .mtj-muted').textContent).toBe(
      'question from demo'
    );
    expect(el.querySelectorAll('.mtj-q')).toHaveLength(1);
    model.set('questions', []);
    expect(one(el, '.mtj-questions').hidden).toBe(true);
    cleanup();
    expect(model.listenerCount).toBe(0);
  });
});
