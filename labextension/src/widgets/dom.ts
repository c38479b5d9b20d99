/** Building the DOM of the widgets: text always goes in as `textContent`, never as HTML. */

/** A new `<tag class="cls">text</tag>` (no class and no text when they are empty/absent). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string | null,
  text?: string | number | null
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (cls) {
    node.className = cls;
  }
  if (text !== undefined && text !== null) {
    node.textContent = String(text);
  }
  return node;
}

/** A `<button type="button">`. */
export function button(
  text: string,
  cls: string,
  title?: string
): HTMLButtonElement {
  const node = h('button', cls, text);
  node.type = 'button';
  if (title) {
    node.title = title;
  }
  return node;
}
