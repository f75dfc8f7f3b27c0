// /app/settings - API keys, the publishable key and script tag, the payment provider connection, the payout
// rails, the email sender, the team, the embed origins and the affiliate programme (Email previews:
// ./emails.tsx). Keys and the team are the owner's; the account settings, the provider and the payout rails are the owner's and admins' (the server
// refuses the others with 403 anyway).
// Each section is its own module beside this one.
import { api } from '../../api';
import { unwrap } from '../../../api/client';
import { PageHeader, useLoad } from '../../components/page';
import { AccountSection } from './account';
import { ApiKeysSection } from './api-keys';
import { EmbedOriginsSection } from './embed-origins';
import { EmailSenderSection } from './email-sender';
import { SettingsTabs } from './emails';
import { PayoutRailsSection } from './payout-rails';
import { ProgrammeSection } from './programme';
import { ProviderSection } from './provider';
import { ScriptSection } from './script';
import { TeamSection } from './team';

export function Settings() {
  const account = useLoad(() => unwrap(api.GET('/v1/account/')), []);
  return (
    <>
      <PageHeader title="Settings" subtitle="Your account, its keys, the payment provider and your team." />
      <SettingsTabs current="general" />
      <nav class="toc" aria-label="Settings sections">
        <a href="#account-title">Account</a>
        <a href="#api-keys-title">API keys</a>
        <a href="#script-title">Script tag</a>
        <a href="#provider-title">Payment provider</a>
        <a href="#payout-rails-title">Payout rails</a>
        <a href="#email-sender-title">Email sender</a>
        <a href="#team-title">Team</a>
        <a href="#embed-origins-title">Embed origins</a>
        <a href="#programme-title">Affiliate programme</a>
      </nav>
      <AccountSection account={account} />
      <ApiKeysSection />
      <ScriptSection account={account} />
      <ProviderSection account={account} />
      <PayoutRailsSection />
      <EmailSenderSection account={account} />
      <TeamSection />
      <EmbedOriginsSection account={account} />
      <ProgrammeSection account={account} />
    </>
  );
}
