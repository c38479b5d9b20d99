import { describe, expect, it } from 'vitest';

import { preview } from '../src/widgets/preview';

const refusal = {
  is_error: true,
  blocks: [
    {
      kind: 'text' as const,
      text: 'The user declined, so the research stopped.'
    }
  ],
  structured: null
};

describe('a tool error is headed by how the task ended (issue 30)', () => {
  it('a declined question reads as declined, not as a malfunction', () => {
    const box = preview(refusal as never, 'declined');
    expect(box.querySelector('.mtj-error-title')?.textContent).toBe(
      'the question was declined, and the tool stopped'
    );
  });
  it('any other tool error says the tool reported it', () => {
    const box = preview(refusal as never, 'error');
    expect(box.querySelector('.mtj-error-title')?.textContent).toBe(
      'the tool reported an error'
    );
  });
});
