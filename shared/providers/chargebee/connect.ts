// Chargebee's connection form and CLI command (its definition's `form` and `cli`, ./index.ts): read only
// by the dashboard's provider route, the API reference and the operator CLI. Loaded on first use; in a
// bundle, a file of its own (infra/cloud/bundling.ts).
import { formSentence, type CliConnectSpec, type ConnectionForm, type StoredConnection } from '../../billing/definition';
import { chargebeeSettings, DEFAULT_WEBHOOK_USERNAME, MIN_WEBHOOK_PASSWORD, type ChargebeeConnection } from './settings';

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

export const form: ConnectionForm<ChargebeeConnection> = {
  fields: [
    {
      name: 'site',
      label: 'Site',
      type: 'text',
      required: true,
      placeholder: 'acme-test',
      hint: 'The part of your Chargebee address before .chargebee.com (a test site usually ends in -test).',
    },
    {
      name: 'api_key',
      label: 'API key',
      type: 'password',
      required: true,
      placeholder: 'live_…',
      hint: 'A full-access key: Refloop adds promotional credits and creates coupon codes.',
    },
    {
      name: 'webhook_username',
      label: 'Webhook username',
      type: 'text',
      required: false,
      placeholder: DEFAULT_WEBHOOK_USERNAME,
      hint: `Basic authentication of the webhook you add with the URL above (default ${DEFAULT_WEBHOOK_USERNAME}).`,
    },
    {
      name: 'webhook_password',
      label: 'Webhook password',
      type: 'password',
      required: true,
      placeholder: 'openssl rand -hex 24',
      hint: `At least ${MIN_WEBHOOK_PASSWORD} random characters; enter the same password in Chargebee's webhook settings.`,
    },
  ],
  // Every site has a host of its own (https://<site>.chargebee.com), derived from `site`: the form takes no
  // API URL (only an emulator's, under npm start).
  apiHosts: [],
  connectionFromBody(body, apiUrl) {
    const checked = chargebeeSettings({
      site: str(body.site) ?? '',
      apiKey: str(body.api_key) ?? '',
      webhookUsername: str(body.webhook_username),
      webhookPassword: str(body.webhook_password) ?? '',
      apiUrl,
    });
    return checked.ok ? { ok: true, value: checked.settings } : { ok: false, field: checked.field, message: formSentence(checked.message) };
  },
};

const fromFlags = (values: Record<string, string>) =>
  chargebeeSettings({
    site: values.site ?? '',
    apiKey: values['api-key'] ?? '',
    webhookUsername: values['webhook-username'],
    webhookPassword: values['webhook-password'] ?? '',
    apiUrl: values['api-url'],
  });

export const cli: CliConnectSpec<ChargebeeConnection> = {
  command: 'set-chargebee',
  args: '--site <site> --api-key <key> --webhook-password <password> [--webhook-username <name>] [--api-url <url>]',
  summary: "Connect the account to a Chargebee site (a full-access API key and the webhook's Basic-auth password).",
  flags: ['site', 'api-key', 'webhook-username', 'webhook-password', 'api-url'],
  required: ['site', 'api-key', 'webhook-password'],
  check(values) {
    const r = fromFlags(values);
    return r.ok ? null : `--${r.field.replace(/_/g, '-')} ${r.message}`;
  },
  connection(values) {
    const r = fromFlags(values);
    return r.ok ? { ok: true, connection: r.settings } : { ok: false, message: r.message };
  },
  output: (c) => ({ provider: 'chargebee', site: c.site, webhook_username: c.webhookUsername ?? DEFAULT_WEBHOOK_USERNAME }),
};

/** How the store keeps a connection: the webhook secret is the Basic-auth pair, `<username>:<password>`. */
export function toStored(c: ChargebeeConnection): StoredConnection {
  const username = c.webhookUsername ?? DEFAULT_WEBHOOK_USERNAME;
  return {
    settings: { site: c.site, api_url: c.apiUrl, webhook_username: username },
    apiSecret: c.apiKey,
    webhookSecret: c.webhookPassword === undefined ? null : `${username}:${c.webhookPassword}`,
  };
}
