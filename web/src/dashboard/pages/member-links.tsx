// A member's named links (the member's page): each is the member's code plus a sub-id (`&sub=<slug>`),
// optionally to a deeper page of the site, so reports can tell where their referrals came from. Owners and
// admins create and delete them; the member can too, from their portal.
import { useState } from 'preact/hooks';
import { BusyButton } from '../../ui/busy-button';
import { useConfirm } from '../../ui/confirm';
import { CopyButton } from '../../ui/copy';
import { Field, Form, SubmitButton, textOrUndefined, useFormState } from '../../ui/form';
import { formatTime } from '../../ui/format';
import { useToast } from '../../ui/toast';
import { LoadState, Section, useLoad } from '../components/page';
import { type MemberLink, createLink, deleteLink, listLinks } from '../lib/affiliates';
import { useCan } from '../lib/session';

export const MAX_LINKS = 20;

export function MemberLinks({ memberId, identifier }: { memberId: string; identifier: string }) {
  const canManage = useCan('manage');
  const notify = useToast();
  const confirm = useConfirm();
  const form = useFormState();
  const loaded = useLoad(() => listLinks(memberId), [memberId]);
  const [removing, setRemoving] = useState<string | null>(null);
  const links = loaded.data ?? [];

  const remove = async (link: MemberLink) => {
    const ok = await confirm({
      title: `Delete the link “${link.slug}”?`,
      body: <p>Visitors who follow it still reach your site and credit {identifier}, but without this sub-id.</p>,
      confirmLabel: 'Delete link',
      danger: true,
    });
    if (ok === null) return;
    setRemoving(link.slug);
    try {
      await deleteLink(memberId, link.slug);
      loaded.setData(links.filter((l) => l.slug !== link.slug));
      notify(`Link ${link.slug} deleted.`);
    } catch (err) {
      notify(err instanceof Error && err.message ? err.message : 'The link could not be deleted.', 'error');
    } finally {
      setRemoving(null);
    }
  };

  return (
    <Section
      id="member-links"
      title="Links"
      description="Named links with a sub-id (&sub=…), to any page of your site: referrals, clicks and reports can be cut by them."
    >
      <LoadState loaded={loaded} what="the links">
        {() => (
          <>
            {links.length === 0 ? (
              <p class="muted">No named links yet{canManage ? ': create one below.' : '.'}</p>
            ) : (
              <div class="table-wrap">
                <table class="table">
                  <caption class="sr-only">Links of {identifier}</caption>
                  <thead>
                    <tr>
                      <th scope="col">Sub-id</th>
                      <th scope="col">Link</th>
                      <th scope="col">Created</th>
                      <th scope="col">
                        <span class="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {links.map((l) => (
                      <tr key={l.slug}>
                        <td>
                          <span class="tag">{l.slug}</span>
                        </td>
                        <td>
                          {l.url ? (
                            <span class="mono-small break">{l.url}</span>
                          ) : (
                            <span class="muted">
                              Set where members' links point in <a href="/app/settings#script-title">Settings</a>
                              {l.destination_path ? ` (page ${l.destination_path})` : ''}
                            </span>
                          )}
                        </td>
                        <td>{formatTime(l.created_at)}</td>
                        <td>
                          <div class="row-actions">
                            <a
                              class="btn btn-ghost btn-small"
                              href={`/app/referrals?member=${encodeURIComponent(memberId)}&sub=${encodeURIComponent(l.slug)}`}
                              aria-label={`Referrals through link ${l.slug}`}
                            >
                              Referrals
                            </a>
                            {l.url && <CopyButton text={l.url} what={`link ${l.slug}`} />}
                            {canManage && (
                              <BusyButton
                                variant="ghost"
                                class="btn-small btn-danger-text"
                                busy={removing === l.slug}
                                busyLabel="Deleting…"
                                disabled={removing !== null}
                                aria-label={`Delete link ${l.slug}`}
                                onClick={() => void remove(l)}
                              >
                                Delete
                              </BusyButton>
                            )}
                          </div>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {canManage && links.length < MAX_LINKS && (
              <Form
                form={form}
                labelledBy="member-links-title"
                onSubmit={async (data, el) => {
                  const made = await createLink(memberId, {
                    slug: textOrUndefined(data, 'slug'),
                    destination_path: textOrUndefined(data, 'destination_path'),
                  });
                  el.reset();
                  loaded.setData([made, ...links.filter((l) => l.slug !== made.slug)]);
                  notify(`Link ${made.slug} created.`);
                }}
              >
                <div class="form-row">
                  <Field
                    name="slug"
                    label="Sub-id"
                    optional
                    maxLength={40}
                    autoComplete="off"
                    spellcheck={false}
                    hint="e.g. youtube; generated when empty."
                  />
                  <Field
                    name="destination_path"
                    label="Page"
                    optional
                    autoComplete="off"
                    spellcheck={false}
                    placeholder="/pricing"
                    hint="A path of your site; its home page when empty."
                  />
                  <SubmitButton form={form} busyLabel="Creating…" variant="secondary">
                    Create link
                  </SubmitButton>
                </div>
              </Form>
            )}
            {canManage && links.length >= MAX_LINKS && <p class="hint">A member has at most {MAX_LINKS} named links.</p>}
          </>
        )}
      </LoadState>
    </Section>
  );
}
