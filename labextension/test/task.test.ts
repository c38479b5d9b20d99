import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import type { IResultPreview } from '../src/widgets/preview';
import task, {
  type ITaskState,
  progressView,
  ttlText
} from '../src/widgets/task';
import { mount, one, settle, texts } from './fake-model';

const NOW = 1_700_000_000; // epoch seconds on the test's clock

function state(patch: Partial<ITaskState> = {}): ITaskState {
  return {
    tool: 'research',
    server: 'demo',
    status: 'working',
    status_message: '',
    progress: null,
    started: NOW - 5,
    finished: null,
    created: null,
    ttl_ms: null,
    poll_interval_ms: null,
    task_id: '',
    eta: null,
    done: false,
    error: '',
    result: null,
    logs: [],
    log_count: 0,
    pending: [],
    cancelling: false,
    cancel_error: '',
    questions: [],
    sent_at: NOW,
    ...patch
  };
}

const HOSTILE = '<img src=x onerror=alert(1)><b>bold</b>';

describe('task widget', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW * 1000);
  });
  afterEach(() => {
    vi.useRealTimers();
    document.body.replaceChildren();
  });

  it('draws the head, the clocks and the details', () => {
    const { el } = mount(
      task,
      state({
        status_message: 'step 1',
        ttl_ms: 60_000,
        created: NOW - 10,
        poll_interval_ms: 1500,
        task_id: 't-1'
      })
    );
    expect(one(el, '.mtj-badge').textContent).toBe('working');
    expect(one(el, '.mtj-badge').className).toBe('mtj-badge mtj-s-working');
    expect(one(el, '.mtj-tool').textContent).toBe('research');
    expect(one(el, '.mtj-server').textContent).toBe('demo');
    // No progress: an activity bar, the status message beside it.
    expect(one(el, '.mtj-progress').hidden).toBe(false);
    expect(one(el, '.mtj-bar').classList.contains('mtj-indeterminate')).toBe(
      true
    );
    expect(one(el, '.mtj-progress-text').textContent).toBe('step 1');
    expect(one(el, '.mtj-message').hidden).toBe(true);
    expect(one(el, '.mtj-elapsed').textContent).toBe('running for 5.0 s');
    // The poll interval, the TTL and the id are in the details view.
    const details = one(el, 'details.mtj-details');
    expect(one(details, '.mtj-ttl').textContent).toBe(
      'the server keeps this task for 1 min 00 s after it was created (50.0 s left)'
    );
    expect(one(details, '.mtj-poll').textContent).toBe('polled every 1.5 s');
    expect(one(details, '.mtj-task-id').textContent).toBe('task id t-1');
    expect(one(el, '.mtj-logs').hidden).toBe(true);
    expect(one<HTMLButtonElement>(el, '.mtj-cancel').disabled).toBe(false);
  });

  it('ticks the clocks in the browser, on the kernel clock', () => {
    const { el, model } = mount(task, state({ ttl_ms: 8000, created: NOW }));
    vi.advanceTimersByTime(3000);
    expect(one(el, '.mtj-elapsed').textContent).toBe('running for 8.0 s');
    expect(one(el, '.mtj-ttl').textContent).toContain('(5.0 s left)');
    // The kernel's clock is 2 s ahead of this browser's: a live update says so.
    model.set('sent_at', NOW + 3 + 2);
    vi.advanceTimersByTime(1000);
    expect(one(el, '.mtj-elapsed').textContent).toBe('running for 11.0 s');
    vi.advanceTimersByTime(10_000);
    expect(one(el, '.mtj-ttl').textContent).toBe(
      "the server's 8.0 s for this task are over (it may drop the task)"
    );
  });

  it('stops ticking once the task finished', async () => {
    const { el, model } = mount(task, state());
    model.update({ finished: NOW + 1, done: true, status: 'completed' });
    await settle();
    expect(one(el, '.mtj-elapsed').textContent).toBe('took 6.0 s');
    vi.advanceTimersByTime(5000);
    expect(one(el, '.mtj-elapsed').textContent).toBe('took 6.0 s');
    expect(one(el, '.mtj-cancel').hidden).toBe(true);
    expect(one(el, '.mtj-badge').className).toBe('mtj-badge mtj-s-completed');
  });

  it('redraws once per burst of changes', async () => {
    const { el, model } = mount(task, state());
    const badge = one(el, '.mtj-badge');
    let writes = 0;
    new MutationObserver(records => (writes += records.length)).observe(badge, {
      childList: true
    });
    model.update({ status: 'input_required', status_message: 'asks' });
    model.set('status', 'working');
    expect(badge.textContent).toBe('working'); // not drawn yet: one microtask later
    await settle();
    expect(badge.textContent).toBe('working');
    expect(one(el, '.mtj-progress-text').textContent).toBe('asks'); // beside the activity bar
    expect(writes).toBe(1);
  });

  it('shows known and unknown progress', async () => {
    const { el, model } = mount(task, state({ progress: [3, 4, 'files'] }));
    expect(one(el, '.mtj-progress').hidden).toBe(false);
    expect(one(el, '.mtj-fill').style.width).toBe('75%');
    expect(one(el, '.mtj-progress-text').textContent).toBe('3/4 (75%) files');
    expect(one(el, '.mtj-bar').classList.contains('mtj-indeterminate')).toBe(
      false
    );
    model.set('progress', [7, null, null]);
    await settle();
    expect(one(el, '.mtj-bar').classList.contains('mtj-indeterminate')).toBe(
      true
    );
    expect(one(el, '.mtj-fill').style.width).toBe('');
    expect(one(el, '.mtj-progress-text').textContent).toBe('7');
    model.set('done', true);
    await settle();
    expect(one(el, '.mtj-progress').hidden).toBe(true);
  });

  it('clamps progress beyond its total', () => {
    expect(progressView([12, 10, null])).toEqual({
      percent: 100,
      text: '12/10 (100%)'
    });
    expect(progressView([-1, 10, 'x'])).toEqual({
      percent: 0,
      text: '-1/10 (0%) x'
    });
    expect(progressView([1, 0, null])).toEqual({ percent: null, text: '1' });
  });

  it('asks the kernel to cancel, once', async () => {
    const { el, model } = mount(task, state());
    const cancel = one<HTMLButtonElement>(el, '.mtj-cancel');
    cancel.click();
    cancel.click();
    expect(model.sent).toEqual([{ type: 'cancel' }]);
    expect(cancel.disabled).toBe(true);
    model.set('cancelling', true);
    await settle();
    expect(cancel.textContent).toBe('Cancelling…');
    model.update({ cancelling: false, cancel_error: 'the server refused' });
    await settle();
    expect(cancel.disabled).toBe(false);
    expect(cancel.textContent).toBe('Cancel task');
    const errors = el.querySelectorAll<HTMLElement>('.mtj-error-text');
    expect([...errors].find(e => !e.hidden)?.textContent).toBe(
      'the server refused'
    );
  });

  it('shows an error as text, muted for a cancellation', async () => {
    const { el, model } = mount(task, state());
    model.update({ status: 'failed', done: true, error: HOSTILE });
    await settle();
    const error = one(el, 'pre.mtj-pre');
    expect(error.textContent).toBe(HOSTILE);
    expect(error.className).toBe('mtj-pre mtj-error-text');
    expect(el.querySelector('img, b')).toBeNull();
    model.update({ status: 'cancelled', error: 'cancelled by you' });
    await settle();
    expect(error.className).toBe('mtj-pre mtj-muted');
  });

  it('lists the questions it waits for, except those with a form on show', async () => {
    const { el, model } = mount(
      task,
      state({ pending: ['Which topic?', 'Depth?'] })
    );
    expect(texts(el, '.mtj-question')).toEqual([
      'waiting for input: Which topic?',
      'waiting for input: Depth?'
    ]);
    model.set('questions', [
      {
        id: 'q1',
        mode: 'form',
        message: 'Depth?',
        fields: [],
        url: null,
        href: null,
        state: 'open',
        note: '',
        errors: {},
        attempts: 0
      }
    ]);
    await settle();
    expect(texts(el, '.mtj-question')).toEqual([
      'waiting for input: Which topic?'
    ]);
    expect(el.querySelectorAll('.mtj-q')).toHaveLength(1);
    model.set('pending', []);
    await settle();
    expect(one(el, '.mtj-pending').hidden).toBe(true);
  });

  it('shows the last log lines and how many there were', async () => {
    const { el, model } = mount(task, state());
    model.update({ logs: ['info demo: a', 'info demo: b'], log_count: 7 });
    await settle();
    expect(one(el, '.mtj-logs').hidden).toBe(false);
    expect(one(el, '.mtj-logs summary').textContent).toBe(
      'log (7 lines, last 2 shown)'
    );
    expect(one(el, '.mtj-log-lines').textContent).toBe(
      'info demo: a\ninfo demo: b'
    );
    model.update({ logs: ['one'], log_count: 1 });
    await settle();
    expect(one(el, '.mtj-logs summary').textContent).toBe('log (1 line)');
  });

  it('draws a result preview without HTML from the server', async () => {
    const result: IResultPreview = {
      is_error: false,
      blocks: [
        { kind: 'text', text: HOSTILE, cut: 1200 },
        { kind: 'image', mime: 'image/png', data: 'iVBORw0KGgo=' },
        { kind: 'image', mime: 'image/svg+xml', data: 'PHN2Zz4=' },
        {
          kind: 'link',
          label: 'docs',
          uri: 'https://x.example/a',
          href: 'https://x.example/a'
        },
        {
          kind: 'link',
          label: 'bad',
          uri: 'javascript:alert(1)',
          href: 'javascript:alert(1)'
        },
        { kind: 'resource', uri: 'file:///r.txt', text: 'body', cut: 0 },
        { kind: 'note', text: 'audio (audio/wav) not shown' }
      ],
      structured: {
        kind: 'table',
        columns: ['a', HOSTILE],
        rows: [['1', '2']],
        more_rows: 1500,
        more_columns: 0
      }
    };
    const { el, model } = mount(task, state());
    model.update({ result, status: 'completed', done: true, finished: NOW });
    await settle();
    const box = one(el, '.mtj-result');
    expect(one(box, 'pre').textContent).toBe(HOSTILE);
    expect(texts(box, '.mtj-muted')).toContain(
      '… 1,200 more characters not shown'
    );
    const images = box.querySelectorAll('img');
    expect(images).toHaveLength(1);
    expect(images[0].src).toBe('data:image/png;base64,iVBORw0KGgo=');
    expect(texts(box, '.mtj-muted')).toContain('(content not shown)');
    const links = box.querySelectorAll('a');
    expect(links).toHaveLength(1);
    expect(links[0].href).toBe('https://x.example/a');
    expect(links[0].rel).toBe('noopener noreferrer');
    expect(texts(box, 'code')).toContain('javascript:alert(1)');
    expect(texts(box, 'th')).toEqual(['a', HOSTILE]);
    expect(texts(box, 'td')).toEqual(['1', '2']);
    expect(texts(box, '.mtj-muted')).toContain('1,500 more rows not shown');
    expect(texts(box, '.mtj-muted')).toContain('audio (audio/wav) not shown');
    expect(box.querySelector('b')).toBeNull();
  });

  it('draws a structured tree, the first level open', async () => {
    const { el, model } = mount(task, state());
    model.set('result', {
      is_error: true,
      blocks: [],
      structured: {
        kind: 'tree',
        node: {
          t: 'o',
          more: 2,
          items: [
            ['name', { t: 'v', v: 'x', cut: 0 }],
            ['list', { t: 'a', more: 0, items: [{ t: 'v', v: 1, cut: 0 }] }],
            ['deep', { t: 'cut', kind: 'object', n: 3 }]
          ]
        }
      }
    });
    await settle();
    const box = one(el, '.mtj-result');
    expect(one(box, '.mtj-error-title').textContent).toBe(
      'the tool reported an error'
    );
    const details = box.querySelectorAll('details');
    expect(details).toHaveLength(2);
    expect(details[0].open).toBe(true);
    expect(details[1].open).toBe(false);
    expect(one(details[0], 'summary').textContent).toBe('{5 keys}');
    expect(texts(box, '.mtj-leaf')).toEqual([
      'name: "x"',
      '[0]: 1',
      'deep: {3 keys} (too deep to show)'
    ]);
    expect(texts(box, '.mtj-muted')).toContain('… 2 more not shown');
  });

  it('says so when a result has no content', async () => {
    const { el, model } = mount(task, state());
    model.set('result', { is_error: false, blocks: [], structured: null });
    await settle();
    expect(one(el, '.mtj-result').textContent).toBe('(no content)');
  });

  it('reads statuses in words, a tool error as an error', async () => {
    const { el, model } = mount(task, state({ status: 'input_required' }));
    expect(one(el, '.mtj-badge').textContent).toBe('needs input');
    expect(one(el, '.mtj-progress').hidden).toBe(true); // waiting, not working
    model.update({ status: 'error', done: true, finished: NOW });
    await settle();
    expect(one(el, '.mtj-badge').textContent).toBe('tool error');
    expect(one(el, '.mtj-badge').className).toBe('mtj-badge mtj-s-error');
    model.set('status', 'declined');
    await settle();
    expect(one(el, '.mtj-badge').textContent).toBe('declined');
  });

  it("names its Cancel apart from a question form's Cancel", async () => {
    const { el, model } = mount(task, state());
    model.set('questions', [
      {
        id: 'q1',
        mode: 'form',
        message: 'Depth?',
        fields: [],
        url: null,
        href: null,
        state: 'open',
        note: '',
        errors: {},
        attempts: 0
      }
    ]);
    await settle();
    const names = [...el.querySelectorAll('button')]
      .filter(b => !b.hidden && /cancel/i.test(b.textContent || ''))
      .map(b => b.getAttribute('aria-label') || b.textContent);
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    expect(one(el, '.mtj-cancel').classList.contains('jp-mod-styled')).toBe(
      true
    );
  });

  it('estimates the time left from the progress and its rate', async () => {
    const { el, model } = mount(
      task,
      state({ progress: [1, 4, null], eta: NOW + 15 })
    );
    expect(one(el, '.mtj-eta').textContent).toBe('about 15.0 s left');
    vi.advanceTimersByTime(5000);
    expect(one(el, '.mtj-eta').textContent).toBe('about 10.0 s left');
    model.set('eta', null);
    await settle();
    expect(one(el, '.mtj-eta').hidden).toBe(true);
  });

  it('reads the TTL of a finished task as how long the result is kept, then nothing', () => {
    const at = { created: NOW, now: NOW + 100, finished: true, fetched: false };
    expect(ttlText(60_000, at)).toBe(
      'the server keeps the result for 1 min 00 s after the task was created'
    );
    expect(ttlText(60_000, { ...at, fetched: true })).toBe('');
    expect(ttlText(null, at)).toBe('');
  });

  it('renders markdown from a tree of allowed elements, with a copy button', async () => {
    const { el, model } = mount(task, state());
    const text = '# Report\n- **a** [x](https://x.example)';
    model.update({
      status: 'completed',
      done: true,
      finished: NOW,
      result: {
        is_error: false,
        blocks: [
          {
            kind: 'markdown',
            text,
            cut: 0,
            tree: [
              { t: 'h1', c: ['Report'] },
              {
                t: 'ul',
                c: [
                  {
                    t: 'li',
                    c: [
                      { t: 'strong', c: ['a'] },
                      ' ',
                      { t: 'a', c: ['x'], href: 'https://x.example' },
                      { t: 'a', c: ['bad'], href: 'javascript:alert(1)' },
                      { t: 'script', c: [HOSTILE] }
                    ]
                  }
                ]
              }
            ]
          }
        ],
        structured: {
          kind: 'table',
          columns: ['title'],
          rows: [['A']],
          more_rows: 0,
          more_columns: 0,
          caption: 'sources',
          fields: [['topic', 'tides']]
        }
      }
    });
    await settle();
    const box = one(el, '.mtj-result');
    expect(one(box, '.mtj-md h1').textContent).toBe('Report');
    expect(one(box, '.mtj-md strong').textContent).toBe('a');
    expect([...box.querySelectorAll('a')].map(a => a.href)).toEqual([
      'https://x.example/'
    ]);
    expect(box.querySelector('script, img')).toBeNull();
    expect(one(box, '.mtj-md li').textContent).toContain(HOSTILE);
    expect(one(box, 'caption').textContent).toBe('sources');
    expect(one(box, '.mtj-table-field').textContent).toBe('topic: tides');
    const written: string[] = [];
    Object.defineProperty(navigator, 'clipboard', {
      value: { writeText: async (t: string) => void written.push(t) },
      configurable: true
    });
    const copy = one<HTMLButtonElement>(el, '.mtj-copy');
    copy.click();
    await vi.waitFor(() => expect(copy.textContent).toBe('Copied'));
    expect(written).toEqual([text]);
  });

  it('cleans up its listeners and its clock', () => {
    const { model, cleanup } = mount(task, state());
    expect(model.listenerCount).toBeGreaterThan(0);
    cleanup();
    expect(model.listenerCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
