// The local sender: every member email becomes one .eml file (RFC 5322, multipart/alternative with the
// plain-text and HTML parts) in the outbox folder, named after the message key, so a retried message
// overwrites its own file instead of adding a second one. Open the files with any mail client, or read
// them with `cat` (the parts are 8-bit UTF-8 text).
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHeader, formatMailbox, oneLine, type EmailSender, type OutgoingEmail } from './sender';

export const outboxFileName = (key: string) => `${key.replace(/[^A-Za-z0-9_.-]/g, '_')}.eml`;

export function renderEml(email: OutgoingEmail, date = new Date()): string {
  const boundary = `refloop-${email.key.replace(/[^A-Za-z0-9]/g, '')}`;
  const crlf = (s: string) => s.replace(/\r?\n/g, '\r\n');
  const headers = [
    `From: ${formatMailbox(email.from)}`,
    `To: ${oneLine(email.to)}`,
    `Subject: ${encodeHeader(email.subject)}`,
    `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
    `Message-ID: <${email.key}@refloop.local>`,
    ...Object.entries(email.headers ?? {}).map(([k, v]) => `${k.replace(/[^A-Za-z0-9-]/g, '-')}: ${oneLine(v)}`),
    ...Object.entries(email.tags).map(([k, v]) => `X-Refloop-${k.replace(/[^A-Za-z0-9-]/g, '-')}: ${oneLine(v)}`),
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
  ];
  const part = (type: string, body: string) =>
    [`--${boundary}`, `Content-Type: ${type}; charset=UTF-8`, 'Content-Transfer-Encoding: 8bit', '', crlf(body)].join('\r\n');
  return [headers.join('\r\n'), '', part('text/plain', email.text), part('text/html', email.html), `--${boundary}--`, ''].join('\r\n');
}

export function outboxSender(dir: string): EmailSender {
  return {
    async send(email) {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, outboxFileName(email.key));
      // Temp file + rename: a reader never sees half a message.
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, renderEml(email));
      renameSync(tmp, file);
      return { messageId: `outbox:${outboxFileName(email.key)}` };
    },
  };
}
