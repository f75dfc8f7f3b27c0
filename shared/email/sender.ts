// The sender port of member emails: SES v2 in AWS (ses-sender.ts), an outbox folder of .eml files on a
// laptop and in tests (outbox-sender.ts). Chosen once per container from the configuration.

export interface Mailbox {
  address: string;
  name: string;
}

export interface OutgoingEmail {
  /** Names the message for exactly-once delivery (`conversion-<referral id>`, `reward-<reward id>`). */
  key: string;
  from: Mailbox;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Sent along (SES message tags) so bounce and complaint events lead back to the member. */
  tags: Record<string, string>;
  /** Extra message headers (a member email's List-Unsubscribe and List-Unsubscribe-Post). */
  headers?: Record<string, string>;
}

export interface EmailSender {
  /** Resolves once the message is accepted; throws when it was not (the record is then retried). */
  send(email: OutgoingEmail): Promise<{ messageId: string }>;
}

/** A header value on one line: CR/LF would let a name inject headers. */
export const oneLine = (value: string) => value.replace(/[\r\n]+/g, ' ').trim();

/** RFC 2047 encoded word for a header value that is not plain ASCII. */
export function encodeHeader(value: string): string {
  const clean = oneLine(value);
  return /^[\x20-\x7e]*$/.test(clean) ? clean : `=?UTF-8?B?${Buffer.from(clean, 'utf8').toString('base64')}?=`;
}

/** `"Display Name" <address>` (the name encoded when needed). */
export function formatMailbox(m: Mailbox): string {
  const name = oneLine(m.name);
  if (name === '') return m.address;
  const shown = /^[\x20-\x7e]*$/.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}"` : encodeHeader(name);
  return `${shown} <${m.address}>`;
}
