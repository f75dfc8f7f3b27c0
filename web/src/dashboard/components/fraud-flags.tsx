// What the fraud rules found about a referral, a member or an application (`fraud_flags: [{rule, at,
// detail}]`), in words, with the way to the review queue where they are acted on.
import { formatTime } from '../../ui/format';
import { ruleName } from '../lib/fraud';
import { Section } from './page';

export interface FlagEntry {
  rule: string;
  at: number;
  detail: string;
}

/** The flags as a list (newest first): the rule's name, its sentence, when. */
export function FlagList({ flags }: { flags: FlagEntry[] }) {
  const sorted = [...flags].sort((a, b) => b.at - a.at);
  return (
    <ul class="flag-list">
      {sorted.map((f, i) => (
        <li key={`${f.rule}-${f.at}-${i}`}>
          <strong>{ruleName(f.rule)}</strong>: {f.detail} <span class="muted">{formatTime(f.at)}</span>
        </li>
      ))}
    </ul>
  );
}

/** A card of the flags when there are any (nothing otherwise); `member` narrows the queue's link to them. */
export function FraudFlagsSection({ flags, member, what }: { flags: FlagEntry[]; member?: string | null; what: string }) {
  if (flags.length === 0) return null;
  const queue = `/app/review?status=all${member ? `&member=${encodeURIComponent(member)}` : ''}`;
  return (
    <Section
      id="fraud-flags"
      title="Fraud flags"
      class="card-warning"
      description={`What the fraud rules found about this ${what}.`}
      actions={
        <a class="btn btn-secondary btn-small" href={queue}>
          Review queue
        </a>
      }
    >
      <FlagList flags={flags} />
    </Section>
  );
}
