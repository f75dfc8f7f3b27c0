// The query of GET /v1/referrals/{id}/diagnosis/ (docs/referrals-diagnosis.md): an optional `email`, and no
// other parameter (an unknown one is a 400 that names it, as on the lists).
import * as v from 'valibot';
import { email } from './fields';

export const diagnosisQuery = v.strictObject(
  {
    email: v.optional(
      v.pipe(
        email,
        v.description(
          "The referred user's email address at the payment provider. Default: the referral's `user_identifier` when it is an email address. Compared without case.",
        ),
      ),
    ),
  },
  (issue) => (issue.expected === 'never' ? 'Unknown query parameter. This route takes: email.' : 'Invalid query string.'),
);

/** The referral's user_identifier as an email address (trimmed, domain lower-cased), or null when it is not one. */
export function identifierEmail(userIdentifier: string): string | null {
  const out = v.safeParse(email, userIdentifier);
  return out.success ? out.output : null;
}
