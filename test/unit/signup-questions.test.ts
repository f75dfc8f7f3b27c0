// The campaign form's sign-up questions editor (web/src/dashboard/pages/campaign-signup-state.ts): the answer
// key a question gets from its label (valid for the API, unique on the form), and the body's questions from
// the editor's rows (labels trimmed, a choice's blank options dropped, no options on other types).
import fc from 'fast-check';
import { idFrom, initialSignup, questionsOf, rowOf } from '../../web/src/dashboard/pages/campaign-signup-state';

const QUESTION_ID = /^[a-z0-9_]{1,30}$/;

describe('sign-up questions in the campaign form', () => {
  it('a key from a label: lower case, underscores, accents dropped; "question" when nothing is left', () => {
    expect(idFrom('Where do you publish?', new Set())).toBe('where_do_you_publish');
    expect(idFrom('Élan & Café', new Set())).toBe('elan_cafe');
    expect(idFrom('???', new Set())).toBe('question');
    expect(idFrom('', new Set())).toBe('question');
  });

  it('a key another question has gets a number', () => {
    expect(idFrom('Audience', new Set(['audience']))).toBe('audience_2');
    expect(idFrom('Audience', new Set(['audience', 'audience_2']))).toBe('audience_3');
  });

  it('any label gives a key the API takes, never one already taken', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9_]{1,30}$/), { maxLength: 9 }),
        (label, taken) => {
          const id = idFrom(label, new Set(taken));
          expect(id).toMatch(QUESTION_ID);
          expect(taken).not.toContain(id);
        },
      ),
    );
  });

  it("the body's questions: labels trimmed, a choice's blank options dropped, other types without options", () => {
    const rows = [
      rowOf({ id: 'size', label: '  Audience size ', type: 'choice', required: false, options: ['Small', ' ', 'Large ', ''] }),
      rowOf({ id: 'site', label: 'Your site', type: 'url', required: true, options: ['left over from a choice'] }),
    ];
    expect(questionsOf(rows)).toEqual([
      { id: 'size', label: 'Audience size', type: 'choice', required: false, options: ['Small', 'Large'] },
      { id: 'site', label: 'Your site', type: 'url', required: true, options: null },
    ]);
  });

  it('a campaign without sign-up settings starts closed, manual, without questions; stored questions keep their order', () => {
    expect(initialSignup(undefined)).toEqual({ signup: { enabled: false, approval: 'manual', terms_url: null }, rows: [] });
    const state = initialSignup({
      enabled: true,
      approval: 'auto',
      terms_url: 'https://example.com/terms',
      questions: [
        { id: 'a', label: 'A', type: 'text', required: true, options: null },
        { id: 'b', label: 'B', type: 'text', required: false, options: null },
      ],
    });
    expect(state.rows.map((r) => [r.id, r.autoId])).toEqual([
      ['a', false],
      ['b', false],
    ]);
    expect(new Set(state.rows.map((r) => r.key)).size).toBe(2);
  });
});
