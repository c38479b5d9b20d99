/**
 * BoardWidget front end (`board_widget.py`): the task board. Its parts:
 * the rows as data, searched, filtered, sorted and paged here on the rows
 * already sent, no round trip to the kernel (`boardrows.ts`); the controls
 * (`boardcontrols.ts`); the table, of whose page only the rows in view are in
 * the DOM (`boardtable.ts`); the task index's sweeps, one sweep's items a page
 * at a time (`boardsweeps.ts`). This module wires them to the model.
 * Elapsed times of live rows tick here once a second; history rows (live
 * false: earlier kernels, other notebooks, the server's list) never tick and
 * show only when the person turns "history" on. The kernel's updates are
 * drawn at most once per animation frame (none while the page is hidden).
 * While the board's rows stay the same ones the kernel sends only the rows that
 * changed (a `rows` message, `board_widget.ROWS_MESSAGE`); they are put into the
 * model's rows in place, so that a view opened later, and the widget state a
 * saved notebook keeps, have them too, without being sent back to the kernel.
 */

import type { IRenderProps, IWidgetModel, IWidgetModule } from './anywidget';
import { BoardControls } from './boardcontrols';
import {
  applyRows,
  captionText,
  type IBoardChoice,
  type IBoardState,
  isRowsMessage,
  pageOf,
  prune
} from './boardrows';
import { BoardSweeps } from './boardsweeps';
import { BoardTable } from './boardtable';
import { h } from './dom';
import { follow, FrameRequest, KernelClock } from './live';

export type {
  BoardRow,
  IBoardState,
  IBoardView,
  IRowsMessage,
  RowChange
} from './boardrows';

/** The traits whose change redraws the board. */
const TRAITS = [
  'rows',
  'total',
  'error',
  'note',
  'filter_server',
  'filter_status',
  'sweeps',
  'sweep_page'
] as const satisfies readonly (keyof IBoardState)[];

/** A view's first choice: the kernel's selection and history toggle, nothing ticked. */
function firstChoice(model: IWidgetModel<IBoardState>): IBoardChoice {
  return {
    view: {
      search: '',
      status: model.get('select_status') || '',
      server: model.get('select_server') || '',
      sort: null,
      descending: false,
      page: 0,
      history: Boolean(model.get('show_history'))
    },
    picked: new Set(),
    cancelAsked: new Set()
  };
}

/** The caption, the kernel's note and its error, under the controls. */
function statusLines(model: IWidgetModel<IBoardState>) {
  const caption = h('div', 'mtj-board-caption mtj-muted');
  const note = h('div', 'mtj-board-note mtj-muted');
  const error = h('div', 'mtj-error-text');
  const show = (text: string): void => {
    caption.textContent = text;
    note.textContent = model.get('note');
    note.hidden = !model.get('note');
    error.textContent = model.get('error');
    error.hidden = !model.get('error');
  };
  return { nodes: [caption, note, error], show };
}

function render({ model, el }: IRenderProps<IBoardState>): () => void {
  const clock = new KernelClock(model);
  const choice = firstChoice(model);
  const controls = new BoardControls(model, choice, {
    changed: () => update(),
    cancelledAll: () => table.refresh()
  });
  const table = new BoardTable(
    controls.head,
    choice,
    {
      cancel: key => model.send({ type: 'cancel', key }),
      picked: () => update()
    },
    () => clock.now()
  );
  const lines = statusLines(model);
  const sweeps = new BoardSweeps((id, offset) =>
    model.send({ type: 'sweep', id, offset })
  );
  const root = h('div', 'mtj-board');
  root.append(
    controls.bar,
    controls.actions,
    ...lines.nodes,
    table.node,
    sweeps.node
  );
  el.append(root);

  function update(): void {
    const rows = model.get('rows') || [];
    const page = pageOf(rows, choice.view);
    prune(choice, rows);
    sweeps.show(model.get('sweeps') || [], model.get('sweep_page'));
    table.show(page.rows);
    controls.show(rows, page);
    lines.show(
      captionText(rows, page.shown.length, choice.view, {
        server: model.get('filter_server'),
        status: model.get('filter_status')
      })
    );
  }

  // The first drawing now; the kernel's updates at the next animation frame.
  const frame = new FrameRequest(update);
  const onRows = (content: unknown): void => {
    if (isRowsMessage(content)) {
      // (`initialize` put them in already; once more in case a reloaded module's came later)
      applyRows(model.get('rows'), content);
      clock.learn(content.sent_at);
      frame.request();
    }
  };
  model.on('msg:custom', onRows);
  const stop = follow(model, TRAITS, frame.request, () => table.tick(), clock);
  frame.flush();
  return () => {
    frame.cancel();
    table.dispose();
    model.off('msg:custom', onRows);
    stop();
  };
}

/** Once per model: the rows that changed go into its rows even while no view is on screen. */
function initialize({
  model
}: {
  model: IRenderProps<IBoardState>['model'];
}): () => void {
  const onRows = (content: unknown): void => {
    if (isRowsMessage(content)) {
      applyRows(model.get('rows'), content);
    }
  };
  model.on('msg:custom', onRows);
  return () => model.off('msg:custom', onRows);
}

export default {
  initialize,
  render
} satisfies IWidgetModule<IBoardState>;
