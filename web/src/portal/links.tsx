// The member's named links (GET/POST/DELETE /portal/v1/links/): each a sub-id (`sub`) that clicks,
// referrals and conversions through it carry, optionally to another page of the site (a deep link). The
// default link (Share) is not one of them. "See its results" cuts the chart below by the link's sub-id.
import { useEffect, useState } from 'preact/hooks';
import { formatCount } from '../ui/format';
import { Field, Form, SubmitButton, textOrUndefined, useFormState } from '../ui/form';
import { createLink, deleteLink, errorCode, listLinks, toProblem, type ListPage, type Me, type MemberLink, type Problem } from './api';
import { post } from './host';
import { CopyField } from './sections';

const MAX_LINKS = 20;

export function Links({ me, onSub }: { me: Me; onSub: (sub: string | null) => void }) {
  const [page, setPage] = useState<ListPage<MemberLink> | null>(null);
  const [links, setLinks] = useState<MemberLink[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [removing, setRemoving] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);
  const form = useFormState();

  useEffect(() => {
    setProblem(null);
    listLinks().then(
      (first) => {
        setPage(first);
        setLinks(first.results);
      },
      (err: unknown) => {
        const p = toProblem(err);
        if (p.status === 401) return;
        setProblem(p);
        post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
      },
    );
  }, [attempt]);

  const more = async () => {
    if (!page?.next) return;
    try {
      const next = await listLinks(page.next);
      setPage(next);
      setLinks((all) => [...all, ...next.results.filter((l) => !all.some((a) => a.slug === l.slug))]);
    } catch (err) {
      setProblem(toProblem(err));
    }
  };

  const count = page ? Math.max(page.count, links.length) : 0;
  return (
    <section id="links" class="section" aria-labelledby="links-title">
      <div class="section-head">
        <h2 id="links-title" class="section-title">
          Your links
        </h2>
        {page && (
          <span class="section-count">
            {formatCount(count)} of {MAX_LINKS}
          </span>
        )}
      </div>
      <p class="section-intro">
        Make a link for each place you share it (a video, a newsletter, a post): each has its own results. A link can open any page of the
        site.
      </p>
      {problem ? (
        <div class="notice notice-error" role="alert">
          <p>Your links could not be loaded: {problem.message}</p>
          <button type="button" class="btn btn-secondary btn-small" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </div>
      ) : !page ? (
        <p class="loading" role="status">
          <span class="spinner" aria-hidden="true" />
          Loading your links…
        </p>
      ) : (
        <>
          {links.length > 0 && (
            <ul class="link-list" data-testid="link-list">
              {links.map((link) => (
                <li key={link.slug} class="card link-item">
                  <div class="link-head">
                    <span class="code link-slug">{link.slug}</span>
                    <span class="hint">{link.destination_path ?? 'Home page'}</span>
                  </div>
                  {link.url ? (
                    <CopyField label={`Link “${link.slug}”`} value={link.url} what={`link ${link.slug}`} testId={`link-${link.slug}`} />
                  ) : (
                    <p class="hint">The programme has not set its site address yet: the link appears here once it does.</p>
                  )}
                  <div class="link-actions">
                    <button
                      type="button"
                      class="btn btn-secondary btn-small"
                      onClick={() => {
                        onSub(link.slug);
                        document.getElementById('stats')?.scrollIntoView({ behavior: 'smooth', block: 'start' });
                      }}
                    >
                      See its results<span class="sr-only"> ({link.slug})</span>
                    </button>
                    <button
                      type="button"
                      class="btn btn-ghost btn-small"
                      disabled={removing === link.slug}
                      onClick={async () => {
                        if (!window.confirm(`Delete the link “${link.slug}”? It stops counting new clicks; its results stay.`)) return;
                        setRemoving(link.slug);
                        try {
                          await deleteLink(link.slug);
                          setLinks((all) => all.filter((l) => l.slug !== link.slug));
                          setPage((p) => (p ? { ...p, count: Math.max(0, p.count - 1) } : p));
                        } catch (err) {
                          setProblem(toProblem(err));
                        } finally {
                          setRemoving(null);
                        }
                      }}
                    >
                      Delete<span class="sr-only"> the link {link.slug}</span>
                    </button>
                  </div>
                </li>
              ))}
            </ul>
          )}
          {page.next && (
            <button type="button" class="btn btn-secondary btn-small table-more" onClick={() => void more()}>
              Show more links
            </button>
          )}
          {count < MAX_LINKS ? (
            <div class="card">
              <Form
                form={form}
                labelledBy="new-link-title"
                onSubmit={async (data, el) => {
                  setCreated(null);
                  const slug = textOrUndefined(data, 'slug');
                  const path = textOrUndefined(data, 'destination_path');
                  const link = await createLink({ ...(slug ? { slug } : {}), ...(path ? { destination_path: path } : {}) });
                  setLinks((all) => [link, ...all.filter((l) => l.slug !== link.slug)]);
                  setPage((p) => (p ? { ...p, count: p.count + 1 } : p));
                  setCreated(link.slug);
                  el.reset();
                }}
              >
                <h3 id="new-link-title" class="card-title">
                  New link
                </h3>
                <div class="link-fields">
                  <Field
                    name="slug"
                    label="Name"
                    optional
                    hint="Lower-case letters, digits and dashes, e.g. youtube. Left empty, one is made up."
                    maxLength={40}
                    spellcheck={false}
                    autoComplete="off"
                  />
                  <Field
                    name="destination_path"
                    label="Page of the site"
                    optional
                    hint="A path such as /pricing. Left empty, the link opens the home page."
                    maxLength={500}
                    spellcheck={false}
                    autoComplete="off"
                  />
                </div>
                <div class="form-actions">
                  <SubmitButton form={form} busyLabel="Creating…">
                    Create link
                  </SubmitButton>
                  <p class="form-saved" role="status">
                    {created ? `The link “${created}” is ready to share.` : ''}
                  </p>
                </div>
              </Form>
            </div>
          ) : (
            <p class="hint">You have {MAX_LINKS} links, the most there can be. Delete one to make another.</p>
          )}
          {me.member.link === null && links.length === 0 && (
            <p class="hint">Links show their address once the programme sets its site address.</p>
          )}
        </>
      )}
    </section>
  );
}
