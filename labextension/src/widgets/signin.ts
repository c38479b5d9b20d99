/**
 * SignInWidget front end (`jupyter/widgets/sign_in_widget.py`): "Sign in to
 * NAME" (opens the authorization server in a new tab) and, for when the
 * browser cannot reach the kernel (a hub, a remote server), a field for the
 * address the browser ended on. The pasted address goes to the kernel as a
 * custom message and is never kept in the widget's state; the kernel checks
 * it (`state`, `iss`) and says in `problem` why it was refused.
 */

import type { IRenderProps, IWidgetModule } from './anywidget';
import { button, h } from './dom';

/** The traits of `SignInWidget`. */
export interface ISignInState {
  /** The connection's name. */
  server: string;
  /** The authorization URL (http or https only; checked in Python). */
  url: string;
  /** Why the last pasted address was refused ("" when none was). */
  problem: string;
  /** A pasted address is being checked. */
  busy: boolean;
}

function render({ model, el }: IRenderProps<ISignInState>): () => void {
  const root = h('div', 'mtj-sign-in');
  const link = h(
    'a',
    'jp-Button jp-mod-styled jp-mod-accept mtj-sign-in-button'
  );
  link.target = '_blank';
  link.rel = 'noopener noreferrer';
  const note = h(
    'span',
    'mtj-sign-in-note',
    'the server asks you to sign in; this cell waits (the kernel stays free).'
  );
  const paste = h('form', 'mtj-sign-in-paste');
  const label = h(
    'label',
    'mtj-sign-in-label',
    'Signed in, but the page you ended on did not load? Paste its address here:'
  );
  const input = h('input', 'mtj-sign-in-address');
  input.type = 'text';
  input.autocomplete = 'off';
  input.spellcheck = false;
  input.placeholder = 'http…?code=…&state=…';
  input.setAttribute('aria-label', 'the address your browser ended on');
  const send = button(
    'Finish sign-in',
    'jp-Button jp-mod-styled mtj-sign-in-send'
  );
  send.type = 'submit';
  const problem = h('div', 'mtj-sign-in-problem');
  problem.setAttribute('role', 'alert');
  label.append(input);
  paste.append(label, send);
  root.append(link, note, paste, problem);
  el.append(root);

  function submit(event: Event): void {
    event.preventDefault();
    const address = input.value.trim();
    if (!address || model.get('busy')) {
      return;
    }
    input.value = ''; // the code in it is not kept on the page
    model.send({ type: 'paste', address });
  }
  function update(): void {
    const server = model.get('server');
    link.textContent = `Sign in to ${server}`;
    const url = model.get('url');
    if (/^https?:\/\//i.test(url)) {
      link.href = url;
    } else {
      link.removeAttribute('href');
    }
    const busy = model.get('busy');
    send.disabled = busy;
    send.textContent = busy ? 'Checking…' : 'Finish sign-in';
    problem.textContent = model.get('problem');
    problem.hidden = !model.get('problem');
  }
  paste.addEventListener('submit', submit);
  model.on('change:server', update);
  model.on('change:url', update);
  model.on('change:problem', update);
  model.on('change:busy', update);
  update();
  return () => {
    paste.removeEventListener('submit', submit);
    model.off('change:server', update);
    model.off('change:url', update);
    model.off('change:problem', update);
    model.off('change:busy', update);
  };
}

export default { render } satisfies IWidgetModule<ISignInState>;
