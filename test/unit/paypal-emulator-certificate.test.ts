// The PayPal emulator's webhook certificate (infra/local/emulators/paypal-payouts/server.ts) must be one
// OpenSSL reads, whatever random serial it drew: a serial whose first byte came out 0x00 was DER padding
// OpenSSL refuses, and the webhook check then answered "The PayPal certificate could not be read."
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { certificateSerial, selfSignedCertificate } from '../../infra/local/emulators/paypal-payouts/server';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('the PayPal emulator certificate', () => {
  it.each([
    ['a first byte of zero, then a small byte', '0001020304050607'],
    ['all zero', '0000000000000000'],
    ['a first byte of zero, then a large byte', '00ff020304050607'],
    ['a top bit set', 'ff00000000000000'],
    ['all ones', 'ffffffffffffffff'],
  ])('parses with random bytes of %s', (_what, hex) => {
    const cert = new X509Certificate(selfSignedCertificate(privateKey, publicKey, 'emulator.test', Buffer.from(hex, 'hex')));
    expect(cert.verify(publicKey)).toBe(true);
    expect(cert.serialNumber).toHaveLength(16);
    expect(Number.parseInt(cert.serialNumber.slice(0, 2), 16)).toBeGreaterThanOrEqual(0x40);
  });

  it('a serial is eight bytes, positive and minimal, for any first byte', () => {
    for (let b = 0; b < 256; b++) {
      const serial = certificateSerial(Buffer.from([b, 0, 0, 0, 0, 0, 0, 0]));
      expect(serial).toHaveLength(8);
      expect(serial[0]).toBeGreaterThanOrEqual(0x40);
      expect(serial[0]).toBeLessThan(0x80);
    }
  });

  it('keeps the bytes it was given unchanged', () => {
    const bytes = Buffer.from('0001020304050607', 'hex');
    certificateSerial(bytes);
    expect(bytes.toString('hex')).toBe('0001020304050607');
  });
});
