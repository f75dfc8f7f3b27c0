// An account's Paddle Classic connection: the vendor id, the public key that verifies its alerts and the
// API base URLs (public), and the vendor auth code (secret: stored in its own item, never echoed, logged
// or returned).
export const DEFAULT_VENDORS_API_URL = 'https://vendors.paddle.com/api';
export const DEFAULT_CHECKOUT_API_URL = 'https://checkout.paddle.com/api';

export interface ClassicSettings {
  vendorId: number;
  publicKey: string;
  vendorsApiUrl: string;
  checkoutApiUrl: string;
}

export interface ClassicCredentials extends ClassicSettings {
  authCode: string;
}

export type ClassicConnection = { kind: 'paddle-classic' } & ClassicCredentials;
