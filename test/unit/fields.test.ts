// validate() with the request-body schemas (docs/design/api-contract.md "Request bodies"): DRF messages, every field's
// error at once, unknown and read-only keys dropped, coercions of booleans, decimals and currencies.
import { parseSubscriptionId } from '../../shared/schemas/member';
import { providerIdKey } from '../../shared/store/table';
import { compareProviderIds } from '../../shared/domain/models';
import { createCampaignBody, updateCampaignBody } from '../../shared/schemas/campaign';
import { createMemberBody, updateMemberBody } from '../../shared/schemas/member';
import { createReferralBody } from '../../shared/schemas/referral';
import { REQUIRED, pythonType, validate } from '../../shared/schemas/fields';
import { ValidationError } from '../../shared/domain/errors';
import { utf8Error } from '../../shared/http/body';
import { listReferralsQuery } from '../../shared/schemas/query';

const NULL = 'This field may not be null.';
const BLANK = 'This field may not be blank.';
const NOT_STRING = 'Not a valid string.';
const BOOLEAN = 'Must be a valid boolean.';
const tooLong = (n: number) => `Ensure this field has no more than ${n} characters.`;

/** The field errors validate() throws; fails the test when it throws nothing or something else. */
function errorsOf(schema: Parameters<typeof validate>[0], input: unknown): Record<string, string[]> {
  let caught: unknown;
  try {
    validate(schema, input);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ValidationError);
  const error = caught as ValidationError;
  expect(error.status).toBe(400);
  return error.body();
}

const CAMPAIGN_DEFAULTS = {
  allows_credit: false,
  credit_amount: 0,
  credit_currency: 'USD',
  allows_commission: false,
  commission_amount: 0,
  commission_currency: 'USD',
  commission_months: null,
  reward_threshold: 0,
  referred_discount_type: null,
  referred_discount_amount: 0,
  referred_discount_recurring: false,
  commission_type: 'fixed',
  commission_percent: 0,
  hold_days: 30,
  approval: 'auto',
  min_payout: 0,
};

describe('campaign bodies', () => {
  it('fills the specification defaults on create', () => {
    expect(validate(createCampaignBody, { name: 'Spring' })).toEqual({ name: 'Spring', ...CAMPAIGN_DEFAULTS });
  });

  it('requires name on create', () => {
    expect(errorsOf(createCampaignBody, {})).toEqual({ name: [REQUIRED] });
    expect(REQUIRED).toBe('This field is required.');
  });

  it.each<[unknown, string]>([
    [null, NULL],
    ['', BLANK],
    ['    ', BLANK],
    ['x'.repeat(101), tooLong(100)],
    [true, NOT_STRING],
    [['a'], NOT_STRING],
    [{ a: 1 }, NOT_STRING],
  ])('refuses name %p with %j', (name, message) => {
    expect(errorsOf(createCampaignBody, { name })).toEqual({ name: [message] });
  });

  it('accepts a 100-character name, trims surrounding spaces and turns a number into a string', () => {
    expect(validate(createCampaignBody, { name: 'x'.repeat(100) }).name).toBe('x'.repeat(100));
    expect(validate(createCampaignBody, { name: '  Spring  ' }).name).toBe('Spring');
    expect(validate(createCampaignBody, { name: 2024 }).name).toBe('2024');
  });

  it.each<[unknown, boolean]>([
    [true, true],
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    [1, true],
    ['yes', true],
    ['on', true],
    [false, false],
    ['false', false],
    ['False', false],
    ['FALSE', false],
    ['0', false],
    [0, false],
    ['no', false],
    ['off', false],
  ])('coerces allows_credit %p to %p', (value, expected) => {
    expect(validate(createCampaignBody, { name: 'A', allows_credit: value }).allows_credit).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['maybe', BOOLEAN],
    [2, BOOLEAN],
    ['', BOOLEAN],
    [[], BOOLEAN],
    [{}, BOOLEAN],
    [null, NULL],
  ])('refuses allows_commission %p with %j', (value, message) => {
    expect(errorsOf(createCampaignBody, { name: 'A', allows_commission: value })).toEqual({ allows_commission: [message] });
  });

  it.each<[unknown, number]>([
    ['15', 1500],
    ['15.5', 1550],
    [15, 1500],
    [15.25, 1525],
    ['0.00', 0],
  ])('parses credit_amount %p to %d cents', (value, cents) => {
    expect(validate(createCampaignBody, { name: 'A', credit_amount: value }).credit_amount).toBe(cents);
  });

  it.each<[unknown, string]>([
    ['abc', 'A valid number is required.'],
    ['1.234', 'Ensure that there are no more than 2 decimal places.'],
    ['-1', 'Ensure this value is greater than or equal to 0.'],
    ['12345678901', 'Ensure that there are no more than 10 digits in total.'],
    ['123456789', 'Ensure that there are no more than 8 digits before the decimal point.'],
    [true, 'A valid number is required.'],
    [null, NULL],
  ])('refuses reward_threshold %p with %j', (value, message) => {
    expect(errorsOf(createCampaignBody, { name: 'A', reward_threshold: value })).toEqual({ reward_threshold: [message] });
  });

  it.each<[unknown, string]>([
    ['usd', 'USD'],
    ['eur', 'EUR'],
    ['Gbp', 'GBP'],
    [' jpy ', 'JPY'],
    ['EUR', 'EUR'],
  ])('stores currency %p upper case as %p', (value, expected) => {
    const out = validate(createCampaignBody, { name: 'A', credit_currency: value, commission_currency: value });
    expect(out.credit_currency).toBe(expected);
    expect(out.commission_currency).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['xyz', '"xyz" is not a valid currency code.'],
    ['EURO', '"EURO" is not a valid currency code.'],
    ['US', '"US" is not a valid currency code.'],
    ['12A', '"12A" is not a valid currency code.'],
    ['', BLANK],
    [null, NULL],
    [true, NOT_STRING],
  ])('refuses credit_currency %p with %j', (value, message) => {
    expect(errorsOf(createCampaignBody, { name: 'A', credit_currency: value })).toEqual({ credit_currency: [message] });
  });

  it.each<[unknown, number | null]>([
    [null, null],
    [1, 1],
    ['12', 12],
    [1200, 1200],
  ])('accepts commission_months %p', (value, expected) => {
    expect(validate(createCampaignBody, { name: 'A', commission_months: value }).commission_months).toBe(expected);
  });

  it.each<[unknown, string]>([
    [0, 'Ensure this value is greater than or equal to 1.'],
    [1201, 'Ensure this value is less than or equal to 1200.'],
    [1.5, 'A valid integer is required.'],
    ['abc', 'A valid integer is required.'],
    [true, 'A valid integer is required.'],
  ])('refuses commission_months %p with %j', (value, message) => {
    expect(errorsOf(createCampaignBody, { name: 'A', commission_months: value })).toEqual({ commission_months: [message] });
  });

  it('reports every invalid field at once, one message each', () => {
    expect(
      errorsOf(createCampaignBody, {
        name: '',
        allows_credit: 'maybe',
        credit_amount: '1.234',
        credit_currency: 'zz',
        allows_commission: null,
        commission_amount: 'x',
        commission_currency: 'ABCD',
        commission_months: 0,
        reward_threshold: '-5',
      }),
    ).toEqual({
      name: [BLANK],
      allows_credit: [BOOLEAN],
      credit_amount: ['Ensure that there are no more than 2 decimal places.'],
      credit_currency: ['"zz" is not a valid currency code.'],
      allows_commission: [NULL],
      commission_amount: ['A valid number is required.'],
      commission_currency: ['"ABCD" is not a valid currency code.'],
      commission_months: ['Ensure this value is greater than or equal to 1.'],
      reward_threshold: ['Ensure this value is greater than or equal to 0.'],
    });
  });

  it('reports a missing name together with other errors', () => {
    expect(errorsOf(createCampaignBody, { credit_amount: 'abc' })).toEqual({
      name: [REQUIRED],
      credit_amount: ['A valid number is required.'],
    });
  });

  it('strips unknown and read-only keys', () => {
    const out = validate(createCampaignBody, {
      name: 'A',
      id: 'deadbeef',
      created_at: 1,
      member_count: 7,
      version: 99,
      stats: { rewards: 1 },
      foo: 'bar',
    });
    expect(out).toEqual({ name: 'A', ...CAMPAIGN_DEFAULTS });
  });

  it('update takes any subset, adds no defaults and keeps only the keys sent', () => {
    expect(validate(updateCampaignBody, {})).toEqual({});
    expect(validate(updateCampaignBody, { credit_amount: '2.5', id: 'x', created_at: 5 })).toEqual({ credit_amount: 250 });
    expect(validate(updateCampaignBody, { allows_credit: 'on', credit_currency: 'eur' })).toEqual({
      allows_credit: true,
      credit_currency: 'EUR',
    });
  });

  it('update still refuses null, blank and invalid values', () => {
    expect(errorsOf(updateCampaignBody, { name: null, credit_amount: 'x', allows_credit: 'x' })).toEqual({
      name: [NULL],
      credit_amount: ['A valid number is required.'],
      allows_credit: [BOOLEAN],
    });
    expect(errorsOf(updateCampaignBody, { name: ' ' })).toEqual({ name: [BLANK] });
  });
});

describe('member bodies', () => {
  const base = { identifier: 'user-1', email: 'ann@example.com' };

  it('requires identifier and email on create, and fills the defaults', () => {
    expect(errorsOf(createMemberBody, {})).toEqual({ identifier: [REQUIRED], email: [REQUIRED] });
    expect(validate(createMemberBody, base)).toEqual({
      ...base,
      first_name: null,
      last_name: null,
      campaign: null,
      subscription: null,
      email_opt_out: false,
      payout_email: null,
    });
  });

  it.each<[string, unknown, string]>([
    ['identifier', null, NULL],
    ['identifier', '', BLANK],
    ['identifier', 'i'.repeat(101), tooLong(100)],
    ['identifier', false, NOT_STRING],
    ['email', null, NULL],
    ['email', '', BLANK],
    ['email', 'not-an-email', 'Enter a valid email address.'],
    ['email', 'a@b', 'Enter a valid email address.'],
    ['email', 'a b@example.com', 'Enter a valid email address.'],
    ['email', `${'a'.repeat(250)}@example.com`, 'Enter a valid email address.'],
    ['first_name', 'f'.repeat(51), tooLong(50)],
    ['last_name', 'l'.repeat(51), tooLong(50)],
    ['first_name', true, NOT_STRING],
    ['code', '', BLANK],
    ['code', null, NULL],
    ['code', 'c'.repeat(31), tooLong(30)],
    ['code', 'has space', 'Use only letters, digits, "-" and "_".'],
    ['code', 'bad!', 'Use only letters, digits, "-" and "_".'],
    ['campaign', 'abcd1234', 'Invalid data. Expected a dictionary, but got str.'],
    ['campaign', ['abcd1234'], 'Invalid data. Expected a dictionary, but got list.'],
    ['campaign', 5, 'Invalid data. Expected a dictionary, but got int.'],
    ['campaign', {}, 'This field must be an object with an id.'],
    ['campaign', { id: null }, 'This field must be an object with an id.'],
    ['subscription', { id: 'abc' }, 'Subscription abc could not be found'],
    ['subscription', { id: -3 }, 'Subscription -3 could not be found'],
    ['subscription', true, 'Invalid data. Expected a dictionary, but got bool.'],
  ])('refuses %s %p with %j', (name, value, message) => {
    expect(errorsOf(createMemberBody, { ...base, [name]: value })).toEqual({ [name]: [message] });
  });

  it('accepts the limits and normalises values', () => {
    const out = validate(createMemberBody, {
      identifier: 'i'.repeat(100),
      email: '  Ann.Lee+ref@EXAMPLE.Com ',
      first_name: 'f'.repeat(50),
      last_name: '',
      code: `Ab_9-${'z'.repeat(25)}`,
      campaign: { id: ' abcd1234 ', name: 'ignored' },
      subscription: { id: '123', status: 'ignored' },
    });
    expect(out).toEqual({
      identifier: 'i'.repeat(100),
      email: 'Ann.Lee+ref@example.com',
      first_name: 'f'.repeat(50),
      last_name: null,
      code: `Ab_9-${'z'.repeat(25)}`,
      campaign: { id: 'abcd1234' },
      subscription: { id: 123 },
      email_opt_out: false,
      payout_email: null,
    });
  });

  it('takes null for campaign, subscription and names', () => {
    expect(validate(createMemberBody, { ...base, first_name: null, last_name: null, campaign: null, subscription: null })).toEqual({
      ...base,
      first_name: null,
      last_name: null,
      campaign: null,
      subscription: null,
      email_opt_out: false,
      payout_email: null,
    });
    expect(validate(updateMemberBody, { campaign: null, subscription: null })).toEqual({ campaign: null, subscription: null });
  });

  it('reports several errors at once and drops unknown keys', () => {
    expect(errorsOf(createMemberBody, { email: 'nope', first_name: 'x'.repeat(60), code: 'a b', id: 'x', stats: {} })).toEqual({
      identifier: [REQUIRED],
      email: ['Enter a valid email address.'],
      first_name: [tooLong(50)],
      code: ['Use only letters, digits, "-" and "_".'],
    });
    const out = validate(createMemberBody, { ...base, id: 'x', stats: {}, link_clicks: 3, created_at: 1 });
    expect(Object.keys(out).sort()).toEqual([
      'campaign',
      'email',
      'email_opt_out',
      'first_name',
      'identifier',
      'last_name',
      'payout_email',
      'subscription',
    ]);
  });

  it('update takes any subset and refuses null where not allowed', () => {
    expect(validate(updateMemberBody, {})).toEqual({});
    expect(validate(updateMemberBody, { code: 'NEW-1', id: 'x' })).toEqual({ code: 'NEW-1' });
    expect(errorsOf(updateMemberBody, { email: null, identifier: '' })).toEqual({ email: [NULL], identifier: [BLANK] });
  });
});

describe('referral bodies', () => {
  it('requires both fields', () => {
    expect(errorsOf(createReferralBody, {})).toEqual({ user_identifier: [REQUIRED], member_code: [REQUIRED] });
    expect(errorsOf(createReferralBody, { user_identifier: 'u' })).toEqual({ member_code: [REQUIRED] });
  });

  it.each<[string, unknown, string]>([
    ['user_identifier', null, NULL],
    ['user_identifier', '', BLANK],
    ['user_identifier', 'u'.repeat(256), tooLong(255)],
    ['user_identifier', {}, NOT_STRING],
    ['member_code', null, NULL],
    ['member_code', ' ', BLANK],
    ['member_code', 'c'.repeat(101), tooLong(100)],
  ])('refuses %s %p with %j', (name, value, message) => {
    const body = { user_identifier: 'u', member_code: 'c', [name]: value };
    expect(errorsOf(createReferralBody, body)).toEqual({ [name]: [message] });
  });

  it('accepts valid bodies, coerces numbers and drops unknown keys', () => {
    expect(validate(createReferralBody, { user_identifier: 'u'.repeat(255), member_code: 'ABC', source: 'js', id: 'x' })).toEqual({
      user_identifier: 'u'.repeat(255),
      member_code: 'ABC',
      sub: null,
    });
    expect(validate(createReferralBody, { user_identifier: 42, member_code: ' ABC ' })).toEqual({
      user_identifier: '42',
      member_code: 'ABC',
      sub: null,
    });
    expect(validate(createReferralBody, { user_identifier: 'u', member_code: 'ABC', sub: 'youtube' }).sub).toBe('youtube');
  });
});

describe('lone surrogates (issue 11 item 9)', () => {
  const message = (cp: string) => `Surrogate characters are not allowed: U+${cp}.`;

  it.each<[string, string]>([
    ['\ud800', 'D800'],
    ['a\udbffb', 'DBFF'],
    ['\udc00', 'DC00'],
    ['x\udfff', 'DFFF'],
    ['\ude00\ud83d', 'DE00'], // reversed pair: both lone
    ['\ud83d\ud83d\ude00', 'D83D'], // a high surrogate followed by a pair
  ])('%j is refused in every string field', (value, cp) => {
    expect(errorsOf(createReferralBody, { user_identifier: value, member_code: 'C' })).toEqual({ user_identifier: [message(cp)] });
    expect(errorsOf(createMemberBody, { identifier: 'i', email: 'a@example.com', first_name: value })).toEqual({
      first_name: [message(cp)],
    });
    expect(errorsOf(createMemberBody, { identifier: 'i', email: value })).toEqual({ email: [message(cp)] });
    expect(errorsOf(createCampaignBody, { name: value, credit_currency: value })).toEqual({
      name: [message(cp)],
      credit_currency: [message(cp)],
    });
    expect(errorsOf(createMemberBody, { identifier: 'i', email: 'a@example.com', campaign: { id: value } })).toEqual({
      campaign: [message(cp)],
    });
  });

  it('accepts well-formed pairs and other non-ASCII text', () => {
    expect(validate(createReferralBody, { user_identifier: 'u\ud83d\ude00é', member_code: 'C' }).user_identifier).toBe('u\u{1F600}é');
  });
});

describe('utf8Error (the decoder message of a body that is not UTF-8, as Python words it)', () => {
  it.each<[string, string | null]>([
    ['7b7d', null],
    ['c3a9', null],
    ['f09f9880', null],
    ['ff', 'byte 0xff in position 0: invalid start byte'],
    ['80', 'byte 0x80 in position 0: invalid start byte'],
    ['c080', 'byte 0xc0 in position 0: invalid start byte'],
    ['f590808080', 'byte 0xf5 in position 0: invalid start byte'],
    ['e241', 'byte 0xe2 in position 0: invalid continuation byte'],
    ['e28241', 'bytes in position 0-1: invalid continuation byte'],
    ['eda080', 'byte 0xed in position 0: invalid continuation byte'],
    ['e08080', 'byte 0xe0 in position 0: invalid continuation byte'],
    ['f0808080', 'byte 0xf0 in position 0: invalid continuation byte'],
    ['f4908080', 'byte 0xf4 in position 0: invalid continuation byte'],
    ['c3', 'byte 0xc3 in position 0: unexpected end of data'],
    ['e0a0', 'bytes in position 0-1: unexpected end of data'],
    ['41f09f98', 'bytes in position 1-3: unexpected end of data'],
  ])('%s -> %p', (hex, expected) => {
    expect(utf8Error(Buffer.from(hex, 'hex'))).toBe(expected);
  });
});

describe('pythonType', () => {
  it.each<[unknown, string | undefined, string]>([
    [null, undefined, 'NoneType'],
    [[], undefined, 'list'],
    ['x', undefined, 'str'],
    [true, undefined, 'bool'],
    [1, '1', 'int'],
    [1.5, '1.5', 'float'],
    [1, '1.0', 'float'],
    [1000, '1e3', 'float'],
    [{}, undefined, 'dict'],
  ])('names %p (raw %p) %s', (value, raw, expected) => {
    expect(pythonType(value, raw)).toBe(expected);
  });
});

describe('provider ids (docs/design/providers.md "Ids and shapes")', () => {
  it('parses Classic integers and digit strings as before, and provider string ids as strings', () => {
    expect(parseSubscriptionId(70001)).toBe(70001);
    expect(parseSubscriptionId(' 70001 ')).toBe(70001);
    expect(parseSubscriptionId('sub_01h04vsc0qhwtsbsxh3422wjs4')).toBe('sub_01h04vsc0qhwtsbsxh3422wjs4');
    expect(parseSubscriptionId('sub_1MowQVLkdIwHu7ixeRlqHVzs')).toBe('sub_1MowQVLkdIwHu7ixeRlqHVzs');
    // Chargebee's have no prefix: 8 to 50 letters, digits and inner '-', at least one letter.
    expect(parseSubscriptionId('AzZTZgVlCqZ3S1Ab')).toBe('AzZTZgVlCqZ3S1Ab');
    expect(parseSubscriptionId(' 16BjsrSIh4AdLqkD ')).toBe('16BjsrSIh4AdLqkD');
    expect(parseSubscriptionId('acme-sub-0001')).toBe('acme-sub-0001');
    expect(parseSubscriptionId('12345678')).toBe(12345678);
    for (const bad of ['Abcdefg', '-abcdefgh', 'abc defgh', 'a'.repeat(51), 'tax customer test'])
      expect(parseSubscriptionId(bad)).toBeNull();
    for (const bad of [0, -1, 1.5, '', 'abc', 'sub_', '_x', 'SUB_x', 'sub x', 'sub_01h!', '1e3', 'a'.repeat(200), null, {}, [], true])
      expect(parseSubscriptionId(bad)).toBeNull();
  });

  it('keys Classic ids zero-padded (unchanged) and string ids as they are, ordered within each form', () => {
    expect(providerIdKey(42)).toBe('0000000000000042');
    expect(providerIdKey('sub_01h')).toBe('sub_01h');
    expect([providerIdKey(9), providerIdKey(10)].sort()).toEqual([providerIdKey(9), providerIdKey(10)]);
    expect([2, 'b_1', 10, 'a_2'].sort(compareProviderIds)).toEqual([2, 10, 'a_2', 'b_1']);
  });
});

describe('an unknown query parameter named like an Object member', () => {
  it.each(['toString', 'constructor', 'hasOwnProperty', '__proto__'])(
    '%s is named in the 400 (the errors object has no prototype)',
    (name) => {
      const query: Record<string, unknown> = { [name]: '1' }; // a computed key is an own property, __proto__ too
      expect(Object.hasOwn(query, name)).toBe(true);
      expect(JSON.parse(JSON.stringify(errorsOf(listReferralsQuery, query)))).toEqual({
        [name]: [expect.stringMatching(/^Unknown query parameter\. /)],
      });
    },
  );
});
