// The OpenAPI document (shared/openapi): generated from the route table and the schemas, valid OpenAPI
// 3.1 for a real validator, every route present, a route without metadata refused loudly. That every
// view returns what its response schema declares is test/unit/view-types.test.ts (the real compiler).
import { routes, type Route } from '../../functions/routes';
import { buildOpenApi } from '../../shared/openapi/document';
import { OPERATIONS } from '../../shared/openapi/operations';
import { validateDocument } from '../support/openapi';

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
    expect(op.security).toEqual(auth === 'api-key' ? [{ bearerAuth: [] }, { tokenAuth: [] }] : auth === 'publishable-key' ? [{ publishableKey: [] }] : []);
    if (auth === 'api-key' || auth === 'publishable-key') expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '429']));
    const idempotent = auth === 'api-key' && route.method !== 'GET';
    expect((op.parameters ?? []).some((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey')).toBe(idempotent);
    if (idempotent) expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['409', '422']));
  });

  it('has nothing that is not a route, and documents the auth schemes, the pagination envelope, the errors and the webhooks', () => {
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item as object).map((m) => `${m.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${r.path}`).sort());
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['bearerAuth', 'publishableKey', 'tokenAuth']);
    expect(doc.components.schemas.ReferralPage.required).toEqual(['count', 'next', 'previous', 'results']);
    expect(doc.components.schemas.ValidationErrors.additionalProperties).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1 });
    expect(Object.keys(doc.webhooks).sort()).toEqual(['member.created', 'referral.converted', 'referral.created', 'reward.created', 'subscription.updated']);
    // Body fields come from the valibot schemas: required ones, limits, defaults.
    const campaign = doc.paths['/v1/campaigns/'].post.requestBody.content['application/json'].schema;
    expect(campaign.required).toEqual(['name']);
    expect(campaign.properties.name).toMatchObject({ type: 'string', maxLength: 100 });
    expect(campaign.properties.allows_credit).toMatchObject({ type: 'boolean', default: false });
    const webhook = doc.paths['/webhooks/paddle/{account_id}/'].post;
    expect(Object.keys(webhook.requestBody.content)).toEqual(['application/x-www-form-urlencoded']);
  });

  it('refuses, naming it, a route that has no operation metadata', () => {
    const extra: Route = { name: 'ListGadgets', method: 'GET', path: '/v1/gadgets/', entry: 'functions/gadgets/list.ts', table: 'read' };
    expect(() => buildOpenApi([...routes, extra])).toThrow('no operation metadata in shared/openapi/operations.ts for ListGadgets (GET /v1/gadgets/)');
    expect(Object.keys(OPERATIONS).filter((name) => !routes.some((r) => r.name === name))).toEqual([]);
  });
});
