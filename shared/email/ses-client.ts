// The SES v2 client and the one command the service sends, on their own: ses-sender.ts loads this module
// on the first email a container sends, and Lambda bundles keep it in a file of its own
// (infra/cloud/bundling.ts `lazyModules`), so the member-emails worker does not parse the SES client and
// its REST protocol at init. Packages only: the bundle of this file carries everything it imports.
export { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
