// Wise as a payout rail (shared/rails/definition.ts): its connection form, its webhook check, its adapter
// (loaded on first use) and its emulator folder. Listed in shared/rails/registry.ts. docs/payouts/wise.md
// says what to create at Wise and what each failure means.
import type { PayoutRailDefinition } from '../definition';
import type { PayoutRail } from '../port';
import { verifyWiseWebhook } from './webhook';

export const wise: PayoutRailDefinition = {
  kind: 'wise',
  name: 'Wise',
  fields: [
    {
      name: 'api_token',
      label: 'API token',
      type: 'password',
      required: true,
      hint: 'A Full access personal API token (Wise: Settings, API tokens).',
    },
    {
      name: 'profile_id',
      label: 'Business profile id',
      type: 'integer',
      required: true,
      hint: 'The id of the business profile that pays (GET /v1/profiles lists them).',
    },
    {
      name: 'webhook_public_key',
      label: 'Webhook public key (PEM)',
      type: 'textarea',
      required: true,
      placeholder: '-----BEGIN PUBLIC KEY-----',
      hint: "Wise's public key for webhook signatures (production or sandbox), as Wise's docs publish it.",
    },
  ],
  defaultApiUrl: 'https://api.wise.com',
  destination: 'email',
  webhookPath: 'wise',
  verifyWebhook: async (request, connection) => verifyWiseWebhook(request, connection.credentials.webhook_public_key),
  async adapter(connection): Promise<PayoutRail> {
    const { wiseRail } = await import('./adapter');
    return wiseRail(connection);
  },
  emulator: 'wise',
};
