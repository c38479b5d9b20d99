/**
 * A task's result as the kernel describes it (`views/preview.py`'s `result_preview`): text,
 * markdown (a tree of allowed elements, `markdown.py`), images of allowed
 * types, links, resources, notes and a table or tree of the structured
 * content. The values are the server's: text only, and a link only for http(s).
 */

import { h } from './dom';

export const IMAGE_MIMES: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp'
]);

/** Markdown as `markdown.py` describes it: text, or an allowed element with its children. */
export type MarkdownNode =
  string | { t: string; c: MarkdownNode[]; href?: string; start?: number };

/** Every element a markdown tree may draw (`markdown.TAGS`). */
export const MARKDOWN_TAGS: ReadonlySet<string> = new Set([
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'p',
  'ul',
  'ol',
  'li',
  'pre',
  'code',
  'em',
  'strong',
  'del',
  'a',
  'br',
  'hr',
  'blockquote',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td'
]);

export type Block =
  | { kind: 'text'; text: string; cut: number }
  | { kind: 'markdown'; text: string; tree: MarkdownNode[]; cut: number }
  | { kind: 'image'; mime: string; data: string }
  | { kind: 'link'; label: string; uri: string; href: string | null }
  | {
      kind: 'resource';
      uri: string;
      text: string | null;
      cut: number;
      mime?: string | null;
    }
  | { kind: 'note'; text: string };

/** A bounded tree of a JSON value (`views/preview.py`'s `structured_preview`). */
export type TreeNode =
  | { t: 'v'; v: unknown; cut: number }
  | { t: 'cut'; kind: 'object' | 'array'; n: number }
  | { t: 'o'; items: [string, TreeNode][]; more: number }
  | { t: 'a'; items: TreeNode[]; more: number };

export interface ITable {
  kind: 'table';
  columns: string[];
  rows: string[][];
  more_rows: number;
  more_columns: number;
  /** The key of the structured content the rows were under, and the scalars beside them. */
  caption?: string | null;
  fields?: [string, string][];
}

export interface ITree {
  kind: 'tree';
  node: TreeNode;
}

export interface IResultPreview {
  is_error: boolean;
  blocks: Block[];
  structured: ITable | ITree | null;
}

function cutNote(cut: number | undefined): HTMLElement | null {
  return cut
    ? h(
        'div',
        'mtj-muted',
        `… ${cut.toLocaleString()} more characters not shown`
      )
    : null;
}

function treeNode(
  node: TreeNode,
  key: string | null,
  depth: number
): HTMLElement {
  const label = key === null ? null : h('b', null, key);
  if (node.t === 'v') {
    const row = h('div', 'mtj-leaf');
    if (label) {
      row.append(label, ': ');
    }
    row.append(h('code', null, JSON.stringify(node.v)));
    const note = cutNote(node.cut);
    if (note) {
      row.append(note);
    }
    return row;
  }
  if (node.t === 'cut') {
    const row = h('div', 'mtj-leaf');
    if (label) {
      row.append(label, ': ');
    }
    const size =
      node.kind === 'object' ? `{${node.n} keys}` : `[${node.n} items]`;
    row.append(h('span', 'mtj-muted', `${size} (too deep to show)`));
    return row;
  }
  const details = h('details', 'mtj-tree');
  if (depth === 0) {
    details.open = true;
  }
  const summary = h('summary');
  if (label) {
    summary.append(label, ' ');
  }
  const n = node.items.length + node.more;
  summary.append(
    h('span', 'mtj-muted', node.t === 'o' ? `{${n} keys}` : `[${n} items]`)
  );
  const body = h('div', 'mtj-tree-body');
  if (node.t === 'o') {
    for (const [name, child] of node.items) {
      body.append(treeNode(child, name, depth + 1));
    }
  } else {
    node.items.forEach((child, i) =>
      body.append(treeNode(child, `[${i}]`, depth + 1))
    );
  }
  if (node.more) {
    body.append(
      h('div', 'mtj-muted', `… ${node.more.toLocaleString()} more not shown`)
    );
  }
  details.append(summary, body);
  return details;
}

function markdown(nodes: MarkdownNode[], depth = 0): Node[] {
  const out: Node[] = [];
  for (const node of nodes) {
    if (typeof node === 'string') {
      out.push(document.createTextNode(node));
      continue;
    }
    if (!node || typeof node !== 'object' || !Array.isArray(node.c)) {
      continue;
    }
    const children = depth < 32 ? markdown(node.c, depth + 1) : [];
    if (!MARKDOWN_TAGS.has(node.t)) {
      out.push(...children);
      continue;
    }
    if (node.t === 'a') {
      if (!node.href || !/^https?:\/\//i.test(node.href)) {
        out.push(...children);
        continue;
      }
      const a = h('a');
      a.href = node.href;
      a.target = '_blank';
      a.rel = 'noopener noreferrer';
      a.append(...children);
      out.push(a);
      continue;
    }
    const element = document.createElement(node.t);
    if (node.t === 'ol' && typeof node.start === 'number') {
      (element as HTMLOListElement).start = node.start;
    }
    element.append(...children);
    out.push(element);
  }
  return out;
}

function table(structured: ITable): HTMLElement {
  const wrap = h('div', 'mtj-table-wrap');
  if (structured.fields && structured.fields.length) {
    const line = h('div', 'mtj-table-fields');
    for (const [key, value] of structured.fields) {
      const field = h('span', 'mtj-table-field');
      field.append(h('b', null, key), `: ${value}`);
      line.append(field);
    }
    wrap.append(line);
  }
  const tbl = h('table', 'mtj-table');
  if (structured.caption) {
    tbl.append(h('caption', null, structured.caption));
  }
  const head = h('tr');
  for (const column of structured.columns) {
    head.append(h('th', null, column));
  }
  const thead = h('thead');
  thead.append(head);
  const tbody = h('tbody');
  for (const row of structured.rows) {
    const tr = h('tr');
    for (const cell of row) {
      tr.append(h('td', null, cell));
    }
    tbody.append(tr);
  }
  tbl.append(thead, tbody);
  wrap.append(tbl);
  const notes: string[] = [];
  if (structured.more_rows) {
    notes.push(`${structured.more_rows.toLocaleString()} more rows not shown`);
  }
  if (structured.more_columns) {
    notes.push(
      `${structured.more_columns.toLocaleString()} more columns not shown`
    );
  }
  if (notes.length) {
    wrap.append(h('div', 'mtj-muted', notes.join('; ')));
  }
  return wrap;
}

function block(box: HTMLElement, item: Block, isError: boolean): void {
  switch (item.kind) {
    case 'text': {
      box.append(
        h('pre', isError ? 'mtj-pre mtj-error-text' : 'mtj-pre', item.text)
      );
      const note = cutNote(item.cut);
      if (note) {
        box.append(note);
      }
      return;
    }
    case 'markdown': {
      const md = h('div', 'mtj-md');
      md.append(...markdown(item.tree || []));
      box.append(md);
      const note = cutNote(item.cut);
      if (note) {
        box.append(note);
      }
      return;
    }
    case 'image':
      if (IMAGE_MIMES.has(item.mime)) {
        const img = h('img', 'mtj-image');
        img.alt = `${item.mime} image`;
        img.src = `data:${item.mime};base64,${item.data}`;
        box.append(img);
        return;
      }
      break;
    case 'link': {
      const row = h('div', null, 'link: ');
      if (item.href && /^https?:\/\//i.test(item.href)) {
        const a = h('a', null, item.label);
        a.href = item.href;
        a.target = '_blank';
        a.rel = 'noopener noreferrer';
        row.append(a);
      } else {
        row.append(h('span', null, item.label));
      }
      row.append(' ', h('code', null, item.uri));
      box.append(row);
      return;
    }
    case 'resource': {
      const row = h('div', null, 'resource ');
      row.append(h('code', null, item.uri));
      box.append(row);
      if (item.text !== null && item.text !== undefined) {
        box.append(h('pre', 'mtj-pre', item.text));
        const note = cutNote(item.cut);
        if (note) {
          box.append(note);
        }
      }
      return;
    }
  }
  // a note, an image of a type not allowed, or a kind this front end does not know
  const text = 'text' in item ? item.text : undefined;
  box.append(h('div', 'mtj-muted', text || '(content not shown)'));
}

/** The text of a result preview's text, markdown and resource blocks (what Copy copies). */
export function previewText(result: IResultPreview): string {
  const parts: string[] = [];
  for (const item of result.blocks) {
    if (item.kind === 'text' || item.kind === 'markdown') {
      parts.push(item.text);
    } else if (item.kind === 'resource' && item.text) {
      parts.push(item.text);
    }
  }
  return parts.join('\n');
}

/** What heads a result that is a tool error, by how the task ended (its status as shown). */
export function errorTitle(status?: string): string {
  return status === 'declined'
    ? 'the question was declined, and the tool stopped'
    : 'the tool reported an error';
}

/** The DOM of a result preview; `status` the task's, as shown (a declined task's error reads so). */
export function preview(result: IResultPreview, status?: string): HTMLElement {
  const box = h('div', 'mtj-result');
  if (result.is_error) {
    box.append(h('div', 'mtj-error-title', errorTitle(status)));
  }
  for (const item of result.blocks) {
    block(box, item, result.is_error);
  }
  const structured = result.structured;
  if (structured && structured.kind === 'table') {
    box.append(table(structured));
  } else if (structured && structured.kind === 'tree') {
    box.append(treeNode(structured.node, null, 0));
  }
  if (!box.childNodes.length) {
    box.append(h('div', 'mtj-muted', '(no content)'));
  }
  return box;
}
