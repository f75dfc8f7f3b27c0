// The AWS sender: SES v2 SendEmail from the account's sender address (which must belong to the verified
// identity the stack names; IAM allows ses:SendEmail on that identity and the configuration set only),
// with the configuration set whose bounce and complaint events reach the email-events queue, and message
// tags naming the account and member. One client per container. Only the member-emails worker imports
// this module, so no other function bundles the SES client; it is loaded on the first send
// (./ses-client.ts).
import type { SESv2Client } from '@aws-sdk/client-sesv2';
import { config } from '../config';
import { formatMailbox, type EmailSender } from './sender';
import { traceClient } from '../tracing';

let client: SESv2Client | undefined;

export function sesSender(): EmailSender {
  return {
    async send(email) {
      const { SESv2Client, SendEmailCommand } = await import('./ses-client');
      // retryMode: not AWS_RETRY_MODE's, the bundles leave the adaptive strategy out (infra/cloud/bundling.ts).
      client ??= traceClient(new SESv2Client({ region: config().region, maxAttempts: 3, retryMode: 'standard' }));
      const charset = 'UTF-8';
      const configurationSet = config().sesConfigurationSet;
      const out = await client.send(
        new SendEmailCommand({
          FromEmailAddress: formatMailbox(email.from),
          Destination: { ToAddresses: [email.to] },
          Content: {
            Simple: {
              Subject: { Data: email.subject, Charset: charset },
              Body: { Text: { Data: email.text, Charset: charset }, Html: { Data: email.html, Charset: charset } },
              ...(email.headers ? { Headers: Object.entries(email.headers).map(([Name, Value]) => ({ Name, Value })) } : {}),
            },
          },
          // Tag values allow letters, digits, _ - . @ only: ids and keys are hex and dashes.
          EmailTags: Object.entries(email.tags).map(([Name, Value]) => ({ Name, Value })),
          ...(configurationSet ? { ConfigurationSetName: configurationSet } : {}),
        }),
      );
      return { messageId: out.MessageId ?? '' };
    },
  };
}
