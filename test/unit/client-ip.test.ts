// Issue 23 item 2: the client's address behind CloudFront (shared/http/client-ip.ts). CloudFront-Viewer-Address
// is parsed in its IPv4 and IPv6 forms, and believed only on a request that carries the distribution's secret
// origin header; with the secret configured, a request without it is refused (403).
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  clientIp,
  DIRECT_ACCESS_REFUSED,
  ORIGIN_VERIFY_ENV,
  ORIGIN_VERIFY_HEADER,
  requireDistribution,
  viewerAddress,
} from '../../shared/http/client-ip';

const SECRET = 'unit-test-origin-secret-0123456789abcdef';
const event = (headers: Record<string, string>, sourceIp = '130.176.1.1'): APIGatewayProxyEventV2 =>
  ({ headers, requestContext: { http: { sourceIp } } }) as unknown as APIGatewayProxyEventV2;

const saved = process.env[ORIGIN_VERIFY_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[ORIGIN_VERIFY_ENV];
  else process.env[ORIGIN_VERIFY_ENV] = saved;
});

describe('viewerAddress (CloudFront-Viewer-Address)', () => {
  it.each([
    ['198.51.100.10:46532', '198.51.100.10'],
    ['1.2.3.4:0', '1.2.3.4'],
    ['[::1]:443', '::1'],
    ['[2001:DB8::7]:65535', '2001:db8::7'],
    ['2001:db8::1:443', '2001:db8::1'],
    ['2001:0db8:85a3:0000:0000:8a2e:0370:7334:46532', '2001:0db8:85a3:0000:0000:8a2e:0370:7334'],
    [' 203.0.113.9:80 ', '203.0.113.9'],
  ])('%s -> %s', (value, address) => {
    expect(viewerAddress(value)).toBe(address);
  });

  it.each([
    undefined,
    '',
    '198.51.100.10',
    '198.51.100.10:',
    '198.51.100.10:port',
    'example.com:443',
    '[1.2.3.4]:443',
    '[::1]',
    '999.1.1.1:80',
    '1.2.3.4:123456',
    ':443',
  ])('refuses %p', (value) => {
    expect(viewerAddress(value)).toBeUndefined();
  });
});

describe('clientIp', () => {
  it('without a configured secret (locally): the source address, whatever CloudFront-Viewer-Address says', () => {
    delete process.env[ORIGIN_VERIFY_ENV];
    expect(clientIp(event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: SECRET }, '127.0.0.1'))).toBe(
      '127.0.0.1',
    );
  });

  it('with the secret on the request: the viewer address (any header case); else the source address', () => {
    process.env[ORIGIN_VERIFY_ENV] = SECRET;
    expect(clientIp(event({ 'CloudFront-Viewer-Address': '198.51.100.10:46532', 'X-Refloop-Origin-Verify': SECRET }))).toBe(
      '198.51.100.10',
    );
    expect(clientIp(event({ 'cloudfront-viewer-address': '[2001:db8::5]:443', [ORIGIN_VERIFY_HEADER]: SECRET }))).toBe('2001:db8::5');
    // A forged viewer header without the secret, or with a wrong one, is not believed.
    expect(clientIp(event({ 'cloudfront-viewer-address': '198.51.100.10:46532' }))).toBe('130.176.1.1');
    expect(clientIp(event({ 'cloudfront-viewer-address': '198.51.100.10:46532', [ORIGIN_VERIFY_HEADER]: `${SECRET}x` }))).toBe(
      '130.176.1.1',
    );
    // Through CloudFront but with an unreadable viewer header: the source address.
    expect(clientIp(event({ 'cloudfront-viewer-address': 'garbage', [ORIGIN_VERIFY_HEADER]: SECRET }))).toBe('130.176.1.1');
    expect(clientIp({ headers: {} } as unknown as APIGatewayProxyEventV2)).toBe('unknown');
  });
});

describe('requireDistribution', () => {
  it('lets everything through without a configured secret', () => {
    delete process.env[ORIGIN_VERIFY_ENV];
    expect(() => requireDistribution(event({}))).not.toThrow();
  });

  it('refuses a request without the secret, or with a wrong one, with 403', () => {
    process.env[ORIGIN_VERIFY_ENV] = SECRET;
    expect(() => requireDistribution(event({ [ORIGIN_VERIFY_HEADER]: SECRET }))).not.toThrow();
    for (const headers of <Record<string, string>[]>[{}, { [ORIGIN_VERIFY_HEADER]: '' }, { [ORIGIN_VERIFY_HEADER]: SECRET.slice(1) }]) {
      expect(() => requireDistribution(event(headers))).toThrow(expect.objectContaining({ status: 403, detail: DIRECT_ACCESS_REFUSED }));
    }
  });
});
