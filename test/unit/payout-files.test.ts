// Payout batch files (shared/domain/payout-files.ts): PayPal Payouts web upload (no header, 6 columns),
// Wise batch "send by email" template, and the generic CSV export. Every file is parsed back with a
// strict RFC 4180 reader (CRLF record ends only) and checked field by field.
import {
  FORMAT_LIMITS,
  PayoutFileError,
  csvField,
  payoutFile,
  type PayoutFileFormat,
  type PayoutFileRow,
} from '../../shared/domain/payout-files';
import { maxPayoutCents } from '../../shared/domain/money-limits';

const HEX = '0123456789abcdef0123456789abcdef';
const PAYOUT_ID = `po_${HEX}`;

function row(overrides: Partial<PayoutFileRow> = {}): PayoutFileRow {
  return {
    payout_id: PAYOUT_ID,
    member_id: 'mem_1',
    member_identifier: 'jo-smith',
    member_email: 'jo@example.com',
    member_name: 'Jo Smith',
    payout_email: 'jo.pay@example.com',
    amount: 10050,
    currency: 'EUR',
    reward_count: 3,
    period_start: 1_793_000_000,
    period_end: 1_795_600_000,
    status: 'pending',
    paid_at: null,
    reference: null,
    ...overrides,
  };
}

function rows(count: number, overrides: Partial<PayoutFileRow> = {}): PayoutFileRow[] {
  return Array.from({ length: count }, (_, i) => row({ payout_id: `po_${i.toString(16).padStart(32, '0')}`, ...overrides }));
}

/** Strict RFC 4180 reader: records end with CRLF (also the last one); a bare CR or LF outside quotes throws. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"' && field === '') {
      i += 1;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            i += 1;
            break;
          }
        } else {
          field += text[i];
          i += 1;
        }
      }
      if (i < text.length && text[i] !== ',' && text[i] !== '\r') throw new Error(`junk after quoted field at ${i}`);
    } else if (c === ',') {
      record.push(field);
      field = '';
      i += 1;
    } else if (c === '\r') {
      if (text[i + 1] !== '\n') throw new Error(`bare CR at ${i}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else if (c === '\n' || c === '"') {
      throw new Error(`bare ${c === '\n' ? 'LF' : 'quote'} at ${i}`);
    } else {
      field += c;
      i += 1;
    }
  }
  if (field !== '' || record.length > 0) throw new Error('last record does not end with CRLF');
  return records;
}

const NOTE = 'Referral rewards, November 2026';

describe('csvField (RFC 4180)', () => {
  it.each<[string | number | null, string]>([
    ['plain', 'plain'],
    ['with space', 'with space'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    ['carriage\rreturn', '"carriage\rreturn"'],
    ['', ''],
    [null, ''],
    [42, '42'],
  ])('%j -> %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });
});

describe('FORMAT_LIMITS', () => {
  it('are the published batch sizes', () => {
    expect(FORMAT_LIMITS).toEqual({ paypal: 5000, wise: 1000, csv: 100000 });
  });
});

describe('paypal (PayPal Payouts web upload)', () => {
  it('has no header and 6 columns in order: email, amount, currency, customer id, note, wallet', () => {
    const text = payoutFile('paypal', [row(), row({ payout_email: 'b@example.com', amount: 5, payout_id: `po_${'f'.repeat(32)}` })], {
      note: NOTE,
    });
    const records = parseCsv(text);
    expect(records).toEqual([
      ['jo.pay@example.com', '100.50', 'EUR', `po_${HEX.slice(0, 27)}`, NOTE, 'PAYPAL'],
      ['b@example.com', '0.05', 'EUR', `po_${'f'.repeat(27)}`, NOTE, 'PAYPAL'],
    ]);
  });

  it('writes the payout id as the customer id, truncated to 30 chars with no spaces', () => {
    const [record] = parseCsv(payoutFile('paypal', [row()], { note: NOTE }));
    const customerId = record![3]!;
    expect(customerId).toHaveLength(30);
    expect(customerId).toBe('po_0123456789abcdef0123456789a');
    expect(customerId).not.toMatch(/\s/);
    expect(PAYOUT_ID.startsWith(customerId)).toBe(true);
  });

  it('cuts the note to recipient to 400 chars', () => {
    const long = `${'x'.repeat(399)}yz`;
    const [record] = parseCsv(payoutFile('paypal', [row()], { note: long }));
    expect(record![4]).toBe(`${'x'.repeat(399)}y`);
    const [short] = parseCsv(payoutFile('paypal', [row()], { note: 'x'.repeat(400) }));
    expect(short![4]).toBe('x'.repeat(400));
  });

  it('takes 5,000 rows and refuses 5,001', () => {
    expect(parseCsv(payoutFile('paypal', rows(5000), { note: NOTE }))).toHaveLength(5000);
    expect(() => payoutFile('paypal', rows(5001), { note: NOTE })).toThrow(PayoutFileError);
    expect(() => payoutFile('paypal', rows(5001), { note: NOTE })).toThrow(/5000/);
  });
});

describe('wise (Wise batch, send by email)', () => {
  const HEADER = 'name,recipientEmail,paymentReference,receiverType,amountCurrency,amount,sourceCurrency,targetCurrency';

  it('starts with the exact template header', () => {
    const text = payoutFile('wise', [row()], { note: NOTE });
    expect(text.split('\r\n')[0]).toBe(HEADER);
  });

  it('writes name, email, reference, PERSON, target, amount, source and target currency', () => {
    const text = payoutFile('wise', [row(), row({ member_name: null, payout_email: 'x@example.com', amount: 1 })], { note: 'Rewards' });
    expect(parseCsv(text)).toEqual([
      HEADER.split(','),
      ['Jo Smith', 'jo.pay@example.com', 'Rewards', 'PERSON', 'target', '100.50', 'EUR', 'EUR'],
      ['jo-smith', 'x@example.com', 'Rewards', 'PERSON', 'target', '0.01', 'EUR', 'EUR'],
    ]);
  });

  it('pays from opts.sourceCurrency when given', () => {
    const [, record] = parseCsv(payoutFile('wise', [row()], { note: NOTE, sourceCurrency: 'USD' }));
    expect(record![6]).toBe('USD');
    expect(record![7]).toBe('EUR');
  });

  it('cuts the payment reference to 35 chars', () => {
    const [, record] = parseCsv(payoutFile('wise', [row()], { note: `${'r'.repeat(34)}st` }));
    expect(record![2]).toBe(`${'r'.repeat(34)}s`);
  });

  it('takes 1,000 rows and refuses 1,001', () => {
    expect(parseCsv(payoutFile('wise', rows(1000), { note: NOTE }))).toHaveLength(1001);
    expect(() => payoutFile('wise', rows(1001), { note: NOTE })).toThrow(PayoutFileError);
    expect(() => payoutFile('wise', rows(1001), { note: NOTE })).toThrow(/1000/);
  });
});

describe('csv (generic)', () => {
  const HEADER =
    'payout_id,member_id,member_identifier,member_email,member_name,payout_email,amount,currency,reward_count,period_start,period_end,status,paid_at,reference';

  it('has a header and one row per payout, ISO 8601 UTC timestamps, null fields empty', () => {
    const text = payoutFile(
      'csv',
      [row(), row({ member_name: null, period_start: null, period_end: null, status: 'paid', paid_at: 1_795_600_800, reference: 'TX-9' })],
      { note: NOTE },
    );
    expect(text.split('\r\n')[0]).toBe(HEADER);
    expect(parseCsv(text)).toEqual([
      HEADER.split(','),
      [
        PAYOUT_ID,
        'mem_1',
        'jo-smith',
        'jo@example.com',
        'Jo Smith',
        'jo.pay@example.com',
        '100.50',
        'EUR',
        '3',
        '2026-10-26T07:33:20Z',
        '2026-11-25T09:46:40Z',
        'pending',
        '',
        '',
      ],
      [
        PAYOUT_ID,
        'mem_1',
        'jo-smith',
        'jo@example.com',
        '',
        'jo.pay@example.com',
        '100.50',
        'EUR',
        '3',
        '',
        '',
        'paid',
        '2026-11-25T10:00:00Z',
        'TX-9',
      ],
    ]);
  });

  it('takes 100,000 rows and refuses 100,001', () => {
    expect(parseCsv(payoutFile('csv', rows(100000), { note: NOTE }))).toHaveLength(100001);
    expect(() => payoutFile('csv', rows(100001), { note: NOTE })).toThrow(PayoutFileError);
  });
});

describe.each<PayoutFileFormat>(['paypal', 'wise', 'csv'])('every file (%s)', (format) => {
  it('holds one currency only, naming both in the error', () => {
    const mixed = [row(), row({ currency: 'EUR' }), row({ currency: 'USD' })];
    expect(() => payoutFile(format, mixed, { note: NOTE })).toThrow(PayoutFileError);
    expect(() => payoutFile(format, mixed, { note: NOTE })).toThrow(/EUR.*USD/);
    expect(() => payoutFile(format, [row({ currency: 'USD' }), row({ currency: 'USD' })], { note: NOTE })).not.toThrow();
  });

  it('refuses zero rows', () => {
    expect(() => payoutFile(format, [], { note: NOTE })).toThrow(PayoutFileError);
  });

  it.each([0, -100, 10.5])('refuses amount %p', (amount) => {
    expect(() => payoutFile(format, [row(), row({ amount })], { note: NOTE })).toThrow(PayoutFileError);
  });

  it('ends every line, the last one too, with CRLF', () => {
    const text = payoutFile(format, [row(), row()], { note: NOTE });
    expect(text.endsWith('\r\n')).toBe(true);
    expect(text.endsWith('\r\n\r\n')).toBe(false);
    expect(text.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(text.split('\r\n')).toHaveLength(format === 'paypal' ? 3 : 4);
  });

  it('quotes a name with a comma and a double quote, and reads back the same', () => {
    const name = 'Smith, Jo "JJ"';
    const text = payoutFile(format, [row({ member_name: name, member_identifier: name, payout_email: name })], { note: NOTE });
    expect(text).toContain('"Smith, Jo ""JJ"""');
    expect(parseCsv(text).at(-1)).toContain(name);
  });

  it('quotes a note or field with a line break', () => {
    const text = payoutFile(format, [row({ member_name: 'Jo\nSmith', payout_email: 'Jo\nSmith' })], { note: 'a\r\nb' });
    expect(parseCsv(text).at(-1)).toContain('Jo\nSmith');
  });
});

describe('formula injection guard', () => {
  it.each(['=', '+', '-', '@', '\t', '\r'])('prefixes a text field starting with %j with a quote', (start) => {
    const evil = `${start}HYPERLINK("http://x","y")`;
    const mk = () => row({ member_name: evil, member_identifier: evil, payout_email: evil, reference: evil });
    const paypal = parseCsv(payoutFile('paypal', [mk()], { note: evil }))[0]!;
    // The recipient address too (issue 23 #29): valid payout emails never start so (domain/payout-email.ts).
    expect(paypal[0]).toBe(`'${evil}`);
    expect(paypal[4]).toBe(`'${evil}`);
    const wise = parseCsv(payoutFile('wise', [mk()], { note: evil }))[1]!;
    expect(wise[0]).toBe(`'${evil}`);
    expect(wise[1]).toBe(`'${evil}`);
    expect(wise[2]).toBe(`'${evil}`.slice(0, 35));
    const csv = parseCsv(payoutFile('csv', [mk()], { note: evil }))[1]!;
    expect(csv[2]).toBe(`'${evil}`);
    expect(csv[4]).toBe(`'${evil}`);
    expect(csv[13]).toBe(`'${evil}`);
  });

  // Issue 23 #29: the portal let a member save `=cmd|'/Ccalc'!A0@example.com`, which reached the PayPal and
  // Wise files as it was. Every text field hostile at once: no cell of any file may start a formula.
  it.each(['paypal', 'wise', 'csv'] as PayoutFileFormat[])('%s: no cell of a row full of hostile text starts a formula', (format) => {
    const hostile = ["=cmd|'/Ccalc'!A0@example.com", '+1+1', '-2-3', '@SUM(A1)', '\t=1', '\r=1'];
    for (const evil of hostile) {
      const mk = (i: number) =>
        row({
          payout_id: `po_${i.toString(16).padStart(32, '0')}`,
          member_id: evil,
          member_identifier: evil,
          member_email: evil,
          member_name: evil,
          payout_email: evil,
          status: evil,
          reference: evil,
        });
      const records = parseCsv(payoutFile(format, [mk(1), mk(2)], { note: evil, sourceCurrency: 'EUR' }));
      const cells = records.slice(format === 'paypal' ? 0 : 1).flat();
      expect(cells.length).toBeGreaterThan(0);
      expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([]);
      // The recipient is there, guarded (not dropped).
      expect(cells).toContain(`'${evil}`.slice(0, 35));
    }
  });

  it('refuses an amount above the maximum per payout (domain/money-limits.ts)', () => {
    const max = maxPayoutCents('USD');
    expect(max).toBe(100_000_000);
    expect(parseCsv(payoutFile('paypal', [row({ currency: 'USD', amount: max })], { note: NOTE }))[0]![1]).toBe('1000000.00');
    for (const format of ['paypal', 'wise', 'csv'] as PayoutFileFormat[]) {
      expect(() => payoutFile(format, [row({ currency: 'USD', amount: max + 1 })], { note: NOTE })).toThrow(PayoutFileError);
      // The 33.3-billion-dollar payout of the report.
      expect(() => payoutFile(format, [row({ currency: 'USD', amount: 3_330_000_000_000 })], { note: NOTE })).toThrow(
        /above the maximum of 1000000\.00 USD/,
      );
    }
    // Zero-decimal currencies: 100,000,000 of them.
    expect(maxPayoutCents('JPY')).toBe(10_000_000_000);
  });

  it('counts the quote toward the provider length limits', () => {
    const paypal = parseCsv(payoutFile('paypal', [row()], { note: `=${'x'.repeat(500)}` }))[0]!;
    expect(paypal[4]).toBe(`'=${'x'.repeat(398)}`);
    const wise = parseCsv(payoutFile('wise', [row()], { note: `-${'x'.repeat(50)}` }))[1]!;
    expect(wise[2]).toBe(`'-${'x'.repeat(33)}`);
  });

  it('leaves other text and the amounts alone', () => {
    const text = payoutFile('csv', [row({ member_name: 'Jo-Anne =1', reference: "'quoted" })], { note: NOTE });
    const record = parseCsv(text)[1]!;
    expect(record[4]).toBe('Jo-Anne =1');
    expect(record[13]).toBe("'quoted");
    expect(record[6]).toBe('100.50');
    expect(record[8]).toBe('3');
  });
});
