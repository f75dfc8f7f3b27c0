// The campaign form's sign-up settings while they are edited (campaign-signup.tsx draws them, loaded with
// the form; campaigns.tsx holds them and sends them): the questions keep a stable key for reordering.
// The shapes are written out here rather than taken from the generated API types (../lib/affiliates.ts):
// a unit test (test/unit/signup-questions.test.ts) type-checks this module with the repository's tsconfig,
// before any build has generated them. They are the Campaign's `signup` (structurally the same type).
export interface SignupQuestion {
  id: string;
  label: string;
  type: 'text' | 'url' | 'choice';
  required: boolean;
  options: string[] | null;
}

export interface Signup {
  enabled: boolean;
  approval: 'auto' | 'manual';
  terms_url: string | null;
  questions: SignupQuestion[];
}

/** A question id from its label: "Where do you publish?" -> "where_do_you_publish" (unique among `taken`). */
export function idFrom(label: string, taken: Set<string>): string {
  const base =
    label
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 26)
      .replace(/_+$/g, '') || 'question';
  let id = base;
  for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
  return id;
}

/** The editor's row: the question plus whether its id still follows its label (until the id is edited). */
export interface Row extends SignupQuestion {
  key: number;
  autoId: boolean;
}

let nextKey = 1;
export const rowOf = (q: SignupQuestion, autoId = false): Row => ({ ...q, key: nextKey++, autoId });

/** The body's questions from the editor's rows (a choice keeps its non-empty options; others send null). */
export function questionsOf(rows: Row[]): SignupQuestion[] {
  return rows.map(({ id, label, type, required, options }) => ({
    id,
    label: label.trim(),
    type,
    required,
    options: type === 'choice' ? (options ?? []).map((o) => o.trim()).filter(Boolean) : null,
  }));
}

export interface SignupState {
  signup: Omit<Signup, 'questions'>;
  rows: Row[];
}

export function initialSignup(signup: Signup | undefined): SignupState {
  const s = signup ?? { enabled: false, approval: 'manual', terms_url: null, questions: [] };
  return {
    signup: { enabled: s.enabled, approval: s.approval, terms_url: s.terms_url },
    rows: s.questions.map((q) => rowOf(q)),
  };
}
