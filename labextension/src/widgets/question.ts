/**
 * QuestionWidget front end (`question_form.py`): a question that belongs to
 * no task, drawn by the question forms (`form.ts`).
 */

import type { IRenderProps, IWidgetModule } from './anywidget';
import { h } from './dom';
import { IQuestionEntry, questionsView } from './form';

/** The traits of `QuestionWidget`. */
export interface IQuestionState {
  questions: IQuestionEntry[];
  /** Which server asks ("" when unknown). */
  server: string;
}

function render({ model, el }: IRenderProps<IQuestionState>): () => void {
  const root = h('div', 'mtj-task mtj-question-widget');
  const head = h('div', 'mtj-muted');
  const view = questionsView(model);
  root.append(head, view.root);
  el.append(root);
  function update(): void {
    head.textContent = `question from ${model.get('server') || 'the server'}`;
    view.update();
  }
  model.on('change:questions', update);
  model.on('change:server', update);
  update();
  return () => {
    model.off('change:questions', update);
    model.off('change:server', update);
  };
}

export default { render } satisfies IWidgetModule<IQuestionState>;
