// Paddle Classic p_signature (docs/design/providers.md "Signatures"): PHP serialize() of the key-sorted fields,
// RSA PKCS#1 v1.5 over SHA-1. Real alerts signed by a published test key (test/fixtures/paddle).
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  phpSerialize,
  signPaddleFields,
  signedFields,
  verifyPaddleSignature,
  type AlertFields,
} from '../../shared/providers/paddle-classic/signature';

interface SignedFixtures {
  public_key: string;
  alerts: Record<string, { verifies: boolean; fields: AlertFields }>;
}
const fixtures = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as SignedFixtures;
const PUBLIC_KEY = fixtures.public_key;

const VALID = Object.entries(fixtures.alerts)
  .filter(([, a]) => a.verifies)
  .map(([name, a]) => [name, a.fields] as [string, AlertFields]);
const INVALID = Object.entries(fixtures.alerts)
  .filter(([, a]) => !a.verifies)
  .map(([name, a]) => [name, a.fields] as [string, AlertFields]);

/** A different character at `index` of `text` (same length, still a plain printable character). */
function changeCharAt(text: string, index: number): string {
  const current = text.charAt(index);
  const replacement = current === 'a' ? 'b' : current === '0' ? '1' : /[0-9]/.test(current) ? '0' : 'a';
  return text.slice(0, index) + replacement + text.slice(index + 1);
}

function reversed(fields: AlertFields): AlertFields {
  const out: AlertFields = {};
  for (const key of Object.keys(fields).reverse()) out[key] = fields[key] as string;
  return out;
}

const { publicKey: testPublic, privateKey: testPrivate } = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('phpSerialize (worked examples)', () => {
  it('one field', () => {
    expect(phpSerialize({ foo: 'bar' })).toBe('a:1:{s:3:"foo";s:3:"bar";}');
  });

  it('two fields, sorted by key whatever the object order', () => {
    const expected = 'a:2:{s:8:"alert_id";s:1:"1";s:3:"qty";s:1:"7";}';
    expect(phpSerialize({ alert_id: '1', qty: '7' })).toBe(expected);
    expect(phpSerialize({ qty: '7', alert_id: '1' })).toBe(expected);
  });

  it('sorts in byte order: "_" (0x5F) before lowercase letters, shorter prefix first', () => {
    expect(phpSerialize({ ab: '3', a_b: '2', a: '1' })).toBe('a:3:{s:1:"a";s:1:"1";s:3:"a_b";s:1:"2";s:2:"ab";s:1:"3";}');
  });

  it('an empty value is s:0:"";', () => {
    expect(phpSerialize({ coupon: '' })).toBe('a:1:{s:6:"coupon";s:0:"";}');
  });

  it('lengths are UTF-8 bytes: José is s:5, € is s:3', () => {
    expect(phpSerialize({ name: 'José' })).toBe('a:1:{s:4:"name";s:5:"José";}');
    expect(phpSerialize({ c: '€' })).toBe('a:1:{s:1:"c";s:3:"€";}');
    expect(phpSerialize({ n: '😀' })).toBe('a:1:{s:1:"n";s:4:"😀";}');
  });

  it('quotes, backslashes and semicolons are not escaped', () => {
    expect(phpSerialize({ p: 'a"b\\c;d' })).toBe('a:1:{s:1:"p";s:7:"a"b\\c;d";}');
    expect(phpSerialize({ passthrough: '{"user":"42"}' })).toBe('a:1:{s:11:"passthrough";s:13:"{"user":"42"}";}');
  });

  it('digit strings stay strings (never i:), spaces are kept', () => {
    expect(phpSerialize({ quantity: '7', customer_name: ' John ' })).toBe(
      'a:2:{s:13:"customer_name";s:6:" John ";s:8:"quantity";s:1:"7";}',
    );
  });

  it('an empty map', () => {
    expect(phpSerialize({})).toBe('a:0:{}');
  });

  it('the real subscription_created alert starts as in the reference', () => {
    const fields = signedFields(fixtures.alerts.subscriptionCreatedEvent?.fields ?? {});
    expect(
      phpSerialize(fields).startsWith(
        'a:19:{s:8:"alert_id";s:10:"2091557455";s:10:"alert_name";s:20:"subscription_created";s:10:"cancel_url";s:115:"https://',
      ),
    ).toBe(true);
  });
});

describe('verifyPaddleSignature: real alerts', () => {
  it('has the four valid and two invalid fixtures', () => {
    expect(VALID.map(([n]) => n).sort()).toEqual([
      'subscriptionCancelledEvent',
      'subscriptionCreatedEvent',
      'subscriptionPaymentSucceededEvent',
      'subscriptionUpdatedEvent',
    ]);
    expect(INVALID.map(([n]) => n).sort()).toEqual(['paymentRefundedEvent', 'paymentSucceededEvent']);
  });

  it.each(VALID)('%s verifies', (_name, fields) => {
    expect(verifyPaddleSignature(fields, PUBLIC_KEY)).toBe(true);
  });

  it.each(INVALID)('%s (copied signature) does not verify', (_name, fields) => {
    expect(verifyPaddleSignature(fields, PUBLIC_KEY)).toBe(false);
  });

  it.each(VALID)('%s: any one-character change to any value fails', (_name, fields) => {
    const names = Object.keys(fields).filter((k) => k !== 'p_signature');
    expect(names.length).toBeGreaterThanOrEqual(15);
    for (const key of names) {
      const value = fields[key] as string;
      const variants =
        value === ''
          ? ['x']
          : [changeCharAt(value, 0), changeCharAt(value, value.length - 1), `${value}x`, value.slice(0, -1), ` ${value}`];
      for (const changed of variants) {
        const ok = verifyPaddleSignature({ ...fields, [key]: changed }, PUBLIC_KEY);
        if (ok) throw new Error(`still verifies with ${key}=${JSON.stringify(changed)}`);
      }
    }
  });

  it.each(VALID)('%s: a one-character change to any key fails', (_name, fields) => {
    for (const key of Object.keys(fields).filter((k) => k !== 'p_signature')) {
      const renamed = changeCharAt(key, key.length - 1);
      const { [key]: value, ...rest } = fields;
      expect(verifyPaddleSignature({ ...rest, [renamed]: value as string }, PUBLIC_KEY)).toBe(false);
    }
  });

  it.each(VALID)('%s: an added field fails (even an empty one)', (_name, fields) => {
    expect(verifyPaddleSignature({ ...fields, custom_data: '' }, PUBLIC_KEY)).toBe(false);
    expect(verifyPaddleSignature({ ...fields, zzz: 'extra' }, PUBLIC_KEY)).toBe(false);
    expect(verifyPaddleSignature({ ...fields, aaa: '1' }, PUBLIC_KEY)).toBe(false);
  });

  it.each(VALID)('%s: removing any field fails', (_name, fields) => {
    for (const key of Object.keys(fields).filter((k) => k !== 'p_signature')) {
      const { [key]: _removed, ...rest } = fields;
      expect(verifyPaddleSignature(rest, PUBLIC_KEY)).toBe(false);
    }
  });

  it.each(VALID)('%s: the order of the keys in the object does not matter', (_name, fields) => {
    expect(Object.keys(reversed(fields))).not.toEqual(Object.keys(fields));
    expect(verifyPaddleSignature(reversed(fields), PUBLIC_KEY)).toBe(true);
    expect(phpSerialize(signedFields(reversed(fields)))).toBe(phpSerialize(signedFields(fields)));
  });

  it.each(VALID)('%s: values coerced to numbers would no longer verify', (_name, fields) => {
    // The PHP integer form (`i:`) of a digit string is a different serialization.
    const serialized = phpSerialize(signedFields(fields));
    expect(serialized).not.toMatch(/;i:\d+;/);
    expect(serialized).toContain(`s:${Buffer.byteLength(fields.alert_id as string)}:"${fields.alert_id}";`);
  });

  it.each(VALID)('%s: a missing, empty, garbage or altered p_signature fails', (_name, fields) => {
    const signature = fields.p_signature as string;
    expect(verifyPaddleSignature(signedFields(fields), PUBLIC_KEY)).toBe(false);
    for (const bad of [
      '',
      ' ',
      'not base64!',
      '%2B%2F',
      signature.replace(/\+/g, ' '),
      Buffer.from('x').toString('base64'),
      signature.slice(0, -8),
    ]) {
      expect(verifyPaddleSignature({ ...fields, p_signature: bad }, PUBLIC_KEY)).toBe(false);
    }
    for (const index of [0, 100, 300]) {
      expect(verifyPaddleSignature({ ...fields, p_signature: changeCharAt(signature, index) }, PUBLIC_KEY)).toBe(false);
    }
  });

  it.each(VALID)('%s: the wrong key fails, and an unusable key is false, not an exception', (_name, fields) => {
    expect(verifyPaddleSignature(fields, testPublic)).toBe(false);
    expect(verifyPaddleSignature(fields, testPublic.export({ type: 'spki', format: 'pem' }) as string)).toBe(false);
    expect(verifyPaddleSignature(fields, 'not a key')).toBe(false);
    expect(verifyPaddleSignature(fields, PUBLIC_KEY.replace(/\n/g, ''))).toBe(false);
  });

  it('survives one form encode/decode, not two', () => {
    const [, fields] = VALID[0] as [string, AlertFields];
    const body = new URLSearchParams(fields).toString();
    const once = Object.fromEntries(new URLSearchParams(body));
    expect(verifyPaddleSignature(once, PUBLIC_KEY)).toBe(true);
    // A second form decoding turns the signature's '+' into spaces (pitfall 2.4.6).
    expect(once.p_signature).toContain('+');
    const twice = Object.fromEntries(Object.entries(once).map(([k, v]) => [k, decodeURIComponent(v.replace(/\+/g, ' '))]));
    expect(verifyPaddleSignature(twice, PUBLIC_KEY)).toBe(false);
  });
});

describe('signPaddleFields + verifyPaddleSignature round trip (generated 2048-bit key)', () => {
  const fields: AlertFields = {
    alert_id: '1814644306',
    alert_name: 'subscription_payment_succeeded',
    customer_name: ' Zoë Ångström-Müller €',
    coupon: '',
    passthrough: '{"member":"ABC\\"123"}',
    sale_gross: '173.67',
    subscription_id: '1',
  };

  it('signs what it verifies, over the exact strings', () => {
    const signed = signPaddleFields(fields, testPrivate);
    expect(signed.p_signature).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(signed.p_signature as string, 'base64')).toHaveLength(256);
    expect(verifyPaddleSignature(signed, testPublic)).toBe(true);
    expect(verifyPaddleSignature(signed, testPublic.export({ type: 'spki', format: 'pem' }) as string)).toBe(true);
    expect(verifyPaddleSignature(reversed(signed), testPublic)).toBe(true);
  });

  it('a trimmed customer_name (leading space removed) fails', () => {
    const signed = signPaddleFields(fields, testPrivate);
    expect(verifyPaddleSignature({ ...signed, customer_name: (signed.customer_name as string).trim() }, testPublic)).toBe(false);
    expect(verifyPaddleSignature({ ...signed, customer_name: (signed.customer_name as string).normalize('NFD') }, testPublic)).toBe(false);
  });

  it('re-signing replaces an existing p_signature instead of signing over it', () => {
    const once = signPaddleFields(fields, testPrivate);
    const again = signPaddleFields({ ...once, p_signature: 'stale' }, testPrivate);
    expect(verifyPaddleSignature(again, testPublic)).toBe(true);
    expect(again.p_signature).toBe(once.p_signature); // PKCS#1 v1.5 is deterministic
  });

  it('the real key does not verify our signature', () => {
    expect(verifyPaddleSignature(signPaddleFields(fields, testPrivate), PUBLIC_KEY)).toBe(false);
  });

  it('a simulator body re-signed with the test key verifies after one form decoding', () => {
    const body = readFileSync(join(__dirname, '..', 'fixtures', 'paddle', 'subscription_payment_success.txt'), 'utf8').trimEnd();
    const decoded = Object.fromEntries(new URLSearchParams(body));
    const resigned = signPaddleFields(decoded, testPrivate);
    const wire = new URLSearchParams(resigned).toString();
    expect(verifyPaddleSignature(Object.fromEntries(new URLSearchParams(wire)), testPublic)).toBe(true);
  });
});
