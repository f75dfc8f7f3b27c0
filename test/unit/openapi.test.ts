// The OpenAPI document (shared/openapi): generated from the route table and the schemas, valid OpenAPI
// 3.1 for a real validator, every route present, a route without metadata refused loudly. That every
// view returns what its response schema declares is test/unit/view-types.test.ts (the real compiler).
// Every operation has examples, each valid against its schema, and Spectral's OpenAPI ruleset finds no
// error (the warnings it keeps are listed, with why, below).
import { routes, type Route } from '../../functions/routes';
import { buildOpenApi } from '../../shared/openapi/document';
import { OPERATIONS } from '../../shared/openapi/operations';
import { documentExamples, exampleProblems, lintDocument, validateDocument } from '../support/openapi';

const doc = buildOpenApi(routes) as Record<string, any>;

describe('OpenAPI document', () => {
  it('passes a real OpenAPI 3.1 validator', () => {
    const result = validateDocument(doc);
    expect({ valid: result.valid, errors: result.errors, version: result.version }).toEqual({ valid: true, errors: null, version: '3.1' });
  }, 60_000);

  it('the validator does fail a broken document (so the check above can fail)', () => {
    const broken = JSON.parse(JSON.stringify(doc));
    delete broken.info;
    broken.paths['/v1/referrals/'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/Nope' };
    expect(validateDocument(broken).valid).toBe(false);
  }, 60_000);

  it.each(routes.map((r) => [r.name, r] as const))('%s is in the document with its method, path parameters and auth', (_n, route) => {
    const op = doc.paths[route.path]?.[route.method.toLowerCase()];
    expect(op?.operationId).toBe(route.name);
    const params = [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
    expect((op.parameters ?? []).filter((p: { in?: string }) => p.in === 'path').map((p: { name: string }) => p.name)).toEqual(params);
    const auth = route.auth ?? 'api-key';
    // API-key routes also take the dashboard's session cookie; session-only routes take nothing else; the
    // login routes need no credential, except the current session's GET and DELETE, which read the cookie.
    const security =
      auth === 'api-key'
        ? [{ bearerAuth: [] }, { tokenAuth: [] }, { sessionCookie: [] }]
        : auth === 'publishable-key'
          ? [{ publishableKey: [] }]
          : auth === 'session'
            ? [{ sessionCookie: [] }]
            : auth === 'login' && route.method !== 'POST'
              ? [{ sessionCookie: [] }]
              : auth === 'portal'
                ? [{ portalSession: [] }]
                : [];
    expect({ route: route.name, security: op.security }).toEqual({ route: route.name, security });
    if (auth === 'api-key' || auth === 'publishable-key' || auth === 'session' || auth === 'portal')
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '429']));
    // PUT replaces a resource whole (a retry does the same): it takes no Idempotency-Key.
    const idempotent = (auth === 'api-key' || auth === 'session') && route.method !== 'GET' && route.method !== 'PUT';
    expect((op.parameters ?? []).some((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey')).toBe(idempotent);
    if (idempotent) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
  });

  it('documents 403 on every write a dashboard session can be refused (its role or its Origin) and on every session-only route', () => {
    // docs/dashboard.md "Roles": a role that may not do it is refused with 403; so is a session's unsafe request
    // without this site's Origin (CSRF), and an API key on a session-only route.
    const refusable = routes.filter((r) => r.auth === 'session' || ((r.auth ?? 'api-key') === 'api-key' && r.method !== 'GET'));
    expect(refusable.length).toBeGreaterThan(25);
    const undocumented = refusable
      .filter((r) => !('403' in doc.paths[r.path][r.method.toLowerCase()].responses))
      .map((r) => `${r.method} ${r.path}`);
    expect(undocumented).toEqual([]);
  });

  it("documents the login routes with exactly their answers (no credential, rate limited, never a 403 but the logout's)", () => {
    const responses = (method: string, path: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(responses('post', '/auth/login-links/')).toEqual(['202', '400', '413', '415', '429', '500', '503']);
    expect(responses('post', '/auth/sessions/')).toEqual(['201', '400', '401', '413', '415', '429', '500', '503']);
    expect(responses('get', '/auth/sessions/current/')).toEqual(['200', '401', '500', '503']);
    expect(responses('delete', '/auth/sessions/current/')).toEqual(['204', '403', '500', '503']);
    // The session is the cookie the create sets.
    expect(doc.paths['/auth/sessions/'].post.responses['201'].headers['Set-Cookie']).toBeDefined();
    expect(doc.paths['/auth/sessions/'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Session',
    });
  });

  it('documents the portal routes: bearer portal session on /portal/v1/, the opening with exactly its answers, the page and the widget script as files', () => {
    const responses = (method: string, path: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(responses('post', '/portal/v1/sessions/')).toEqual(['201', '400', '401', '413', '415', '429', '500', '503']);
    expect(responses('get', '/portal/v1/me/')).toEqual(['200', '401', '429', '500', '503']);
    expect(responses('patch', '/portal/v1/me/')).toEqual(['200', '400', '401', '413', '415', '429', '500', '503']);
    expect(doc.components.securitySchemes.portalSession).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(Object.keys(doc.paths['/portal/{account_id}/'].get.responses['200'].content)).toEqual(['text/html']);
    expect(Object.keys(doc.paths['/js/refloop-embed.js'].get.responses['200'].content)).toEqual(['text/javascript']);
    expect(responses('post', '/v1/members/{id}/portal-sessions/')).toEqual(
      expect.arrayContaining(['201', '401', '403', '404', '409', '422']),
    );
  });

  it('has nothing that is not a route, and documents the auth schemes, the pagination envelope, the errors and the webhooks', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      'bearerAuth',
      'portalSession',
      'publishableKey',
      'sessionCookie',
      'tokenAuth',
    ]);
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'refloop_session' });
    expect(doc.components.schemas.ReferralPage.required).toEqual(['count', 'next', 'previous', 'results']);
    expect(doc.components.schemas.ValidationErrors.additionalProperties).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1 });
    expect(Object.keys(doc.webhooks).sort()).toEqual([
      'application.approved',
      'application.created',
      'application.rejected',
      'fraud.flagged',
      'member.created',
      'payout.due',
      'payout.failed',
      'payout.paid',
      'payout.sent',
      'payout.unclaimed',
      'referral.converted',
      'referral.created',
      'reward.approved',
      'reward.created',
      'reward.held',
      'reward.paid',
      'reward.released',
      'reward.voided',
      'subscription.updated',
    ]);
    // Body fields come from the valibot schemas: required ones, limits, defaults.
    const campaign = doc.paths['/v1/campaigns/'].post.requestBody.content['application/json'].schema;
    expect(campaign.required).toEqual(['name']);
    expect(campaign.properties.name).toMatchObject({ type: 'string', maxLength: 100 });
    expect(campaign.properties.allows_credit).toMatchObject({ type: 'boolean', default: false });
    // One intake for every provider: JSON events (Paddle Billing, Stripe) and Paddle Classic's form.
    const webhook = doc.paths['/webhooks/{provider}/{account_id}/'].post;
    expect(Object.keys(webhook.requestBody.content)).toEqual(['application/json', 'application/x-www-form-urlencoded']);
  });

  it('refuses, naming it, a route that has no operation metadata', () => {
    const extra: Route = { name: 'ListGadgets', method: 'GET', path: '/v1/gadgets/', entry: 'functions/gadgets/list.ts', table: 'read' };
    expect(() => buildOpenApi([...routes, extra])).toThrow(
      'no operation metadata in shared/openapi/operations.ts for ListGadgets (GET /v1/gadgets/)',
    );
    expect(Object.keys(OPERATIONS).filter((name) => !routes.some((r) => r.name === name))).toEqual([]);
  });
});

/** `$ref` targets anywhere in a value. */
function refsIn(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) value.forEach((v) => refsIn(v, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.add(v);
      else refsIn(v, out);
    }
  }
  return out;
}

describe('OpenAPI document: what a validating proxy and /docs need', () => {
  it('page_size has the integer default 20 (not the string "20") on every list', () => {
    // The CSV exports page by 10,000 rows (1,000 for the tax export, which decrypts each row): their own defaults.
    const lists = Object.values(doc.paths)
      .flatMap((item: any) => Object.values(item))
      .filter(
        (op: any) =>
          !['ExportCsv', 'ExportTaxDetails'].includes(op.operationId) && (op.parameters ?? []).some((p: any) => p.name === 'page_size'),
      );
    expect(lists.length).toBeGreaterThanOrEqual(6);
    for (const op of lists as any[]) {
      const pageSize = op.parameters.find((p: any) => p.name === 'page_size');
      expect({ op: op.operationId, schema: pageSize.schema }).toEqual({
        op: op.operationId,
        schema: expect.objectContaining({ type: 'integer', default: 20, minimum: 1, maximum: 100 }),
      });
    }
    const exportSize = doc.paths['/v1/exports/{file}/'].get.parameters.find((p: any) => p.name === 'page_size');
    expect(exportSize.schema).toEqual(expect.objectContaining({ type: 'integer', default: 10_000, minimum: 1, maximum: 10_000 }));
  });

  it('every component schema is referenced (no unused …Page envelopes), and no top-level jsonSchemaDialect', () => {
    const used = refsIn({ ...doc, components: { ...doc.components, schemas: undefined } });
    // Referenced from the paths, or from a schema that is (one level is enough here: Page -> item).
    for (const [name, schema] of Object.entries(doc.components.schemas)) if (used.has(`#/components/schemas/${name}`)) refsIn(schema, used);
    const unused = Object.keys(doc.components.schemas).filter((name) => !used.has(`#/components/schemas/${name}`));
    expect(unused).toEqual([]);
    for (const name of ['RewardPage', 'PlanPage', 'CreatedWebhookEndpointPage', 'RewardEventDataPage', 'PaddleWebhookAcceptedPage'])
      expect(doc.components.schemas[name]).toBeUndefined();
    expect(
      Object.keys(doc.components.schemas)
        .filter((n) => n.endsWith('Page'))
        .sort(),
    ).toEqual([
      'ApiKeyPage',
      'ApplicationPage',
      'CampaignPage',
      'FraudFlagPage',
      'LedgerRewardPage',
      'MemberLinkPage',
      'MemberPage',
      'PayoutBatchPage',
      'PayoutPage',
      'PortalPayoutPage',
      'PortalReferralPage',
      'PortalRewardPage',
      'ReferralPage',
      'SubscriptionPage',
      'TeamMemberPage',
      'WebhookDeliveryPage',
      'WebhookEndpointPage',
    ]);
    expect(doc).not.toHaveProperty('jsonSchemaDialect');
  });

  it('every operation has a request example (when it takes a body) and an example for every response with a body', () => {
    const examples = documentExamples(doc);
    for (const route of routes) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const label = `${route.method} ${route.path}`;
      if (op.requestBody)
        expect({ label, request: examples.some((e) => e.where.startsWith(`${label} request`) && e.example !== undefined) }).toEqual({
          label,
          request: true,
        });
      const withBody = Object.entries(op.responses)
        .filter(([, r]: [string, any]) => r.content)
        .map(([status]) => status);
      for (const status of withBody) {
        expect({
          label,
          status,
          example: examples.some((e) => e.where.startsWith(`${label} ${status} `) && e.example !== undefined),
        }).toEqual({ label, status, example: true });
      }
    }
    expect(examples.filter((e) => e.where.startsWith('webhook ')).length).toBe(Object.keys(doc.webhooks).length);
  });

  it('every example validates against its schema (ajv, JSON Schema 2020-12)', () => {
    expect(documentExamples(doc).length).toBeGreaterThan(150);
    expect(exampleProblems(doc)).toEqual([]);
  });

  /**
   * A copy of the document with only the paths a negative test breaks (and every component): the checks read
   * each path on its own, so the others would only add seconds of validation that cannot fail there.
   */
  const brokenBase = (paths: string[]) => {
    const copy = JSON.parse(JSON.stringify(doc));
    copy.paths = Object.fromEntries(paths.map((p) => [p, copy.paths[p]]));
    return copy;
  };

  it('an example that does not match its schema is reported (so the check above can fail)', () => {
    const broken = brokenBase(['/v1/referrals/', '/v1/campaigns/{id}/', '/v1/members/']);
    broken.paths['/v1/referrals/'].post.requestBody.content['application/json'].example = { user_identifier: 5 };
    broken.paths['/v1/campaigns/{id}/'].get.responses['200'].content['application/json'].example.created_at = 'yesterday';
    delete broken.paths['/v1/members/'].get.responses['200'].content['application/json'].example;
    const problems = exampleProblems(broken);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^POST \/v1\/referrals\/ request application\/json: \/ must have required property 'member_code'/),
        expect.stringMatching(/^GET \/v1\/campaigns\/\{id\}\/ 200 application\/json: \/created_at must be integer/),
        'GET /v1/members/ 200 application/json: no example',
      ]),
    );
  });

  /**
   * Warnings kept on purpose: the API's paths end with a slash (the specification's, Django REST
   * Framework's style; the same path without it is served too), and the document names no contact (a
   * self-hosted service has none to name).
   */
  const ACCEPTED_WARNINGS = ['info-contact', 'path-keys-no-trailing-slash'];

  it("passes Spectral's OpenAPI ruleset with no error, and no warning beyond the accepted ones", async () => {
    const results = await lintDocument(doc);
    expect(results.filter((r) => r.severity === 'error')).toEqual([]);
    expect([...new Set(results.filter((r) => r.severity === 'warning').map((r) => r.code))].sort()).toEqual(ACCEPTED_WARNINGS);
  }, 60_000);

  it('Spectral does report a broken document (so the lint above can fail)', async () => {
    const broken = brokenBase(['/v1/referrals/', '/v1/members/', '/v1/campaigns/']);
    broken.paths['/v1/referrals/'].get.parameters.find((p: any) => p.name === 'page_size').schema.default = '20';
    broken.paths['/v1/referrals/'].get.responses['200'].content['application/json'].example.count = 'three';
    delete broken.paths['/v1/members/'].get.operationId;
    broken.paths['/v1/campaigns/'].get.operationId = 'ListReferrals';
    const codes = (await lintDocument(broken)).filter((r) => r.severity === 'error').map((r) => r.code);
    expect(codes).toEqual(
      expect.arrayContaining(['oas3-valid-schema-example', 'oas3-valid-media-example', 'operation-operationId-unique']),
    );
  }, 60_000);

  it('refuses an operation with a request body and no request example', () => {
    const { examples: _dropped, ...withoutExamples } = OPERATIONS.CreateMember as NonNullable<(typeof OPERATIONS)['CreateMember']>;
    expect(() => buildOpenApi(routes, { ...OPERATIONS, CreateMember: withoutExamples })).toThrow(
      'CreateMember takes a request body and has no examples.request',
    );
  });
});
