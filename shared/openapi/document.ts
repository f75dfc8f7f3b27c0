// The OpenAPI 3.1 document, generated from functions/routes.ts (methods, paths, auth), the operation
// metadata (./operations.ts) and the valibot schemas (bodies, queries, responses) through
// @valibot/to-json-schema. Nothing is hand-maintained: a new route needs its line in the route table
// and its entry in OPERATIONS (the generator throws, naming the route, when the entry is missing).
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import type { Route } from '../../functions/routes';
import { EVENT_TYPES, type EventType } from '../domain/events';
import { IDEMPOTENT_METHODS, MAX_KEY_LENGTH } from '../domain/idempotency';
import { MAX_BODY_BYTES } from '../http/body';
import { COMPONENTS, type ComponentName } from './components';
import { COMPONENT_EXAMPLES, CONVERTED_REFERRAL, ERROR_EXAMPLES, NEW_REFERRAL, pageExample, pathParameterExample } from './examples';
import { OPERATIONS, TAGS, type BodyRef, type OperationDoc } from './operations';

type Json = Record<string, unknown>;

const INPUT: ConversionConfig = { target: 'draft-2020-12', typeMode: 'input', errorMode: 'ignore' };

/** `#/$defs/X` (what to-json-schema writes) -> `#/components/schemas/X`; drops per-schema `$schema` and `$defs`. */
function relocate<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map((s) => relocate(s)) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (key === '$schema' || key === '$defs') continue;
    out[key] = key === '$ref' && typeof value === 'string' ? value.replace(/^#\/\$defs\//, '#/components/schemas/') : relocate(value);
  }
  return out as T;
}

function inputSchema(schema: v.GenericSchema): Json {
  return relocate(toJsonSchema(schema, INPUT) as Json);
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The pagination envelope around a component. */
function page(name: ComponentName): Json {
  return {
    type: 'object',
    properties: {
      count: { type: 'integer', description: 'Exact total for the query, across all pages.' },
      next: { type: ['string', 'null'], format: 'uri', description: 'URL of the next page; null on the last.' },
      previous: { type: ['string', 'null'], format: 'uri', description: 'URL of the previous page; null on the first.' },
      results: { type: 'array', items: ref(name) },
    },
    required: ['count', 'next', 'previous', 'results'],
    additionalProperties: false,
  };
}

/** The success content with its example: the operation's own, else its component's (or a page of them). */
function bodyContent(route: Route, body: BodyRef, example: unknown): Json {
  if ('component' in body)
    return { 'application/json': { schema: ref(body.component), example: example ?? COMPONENT_EXAMPLES[body.component] } };
  if ('page' in body)
    return { 'application/json': { schema: ref(`${body.page}Page`), example: example ?? pageExample(body.page, route.path) } };
  if (example === undefined)
    throw new Error(`OpenAPI: ${route.name} has a literal response body and no examples.response in shared/openapi/operations.ts`);
  return { [body.contentType ?? 'application/json']: { schema: body.json, example } };
}

/** The components used as list pages: only these get a `…Page` envelope schema. */
function pagedComponents(operations: OperationDoc[]): ComponentName[] {
  return [...new Set(operations.flatMap((op) => (op.success.body && 'page' in op.success.body ? [op.success.body.page] : [])))];
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request: `{"<field>": ["message", ...]}` per invalid field (all at once), or `{"detail": "..."}`.',
  401: 'Missing (`Authentication credentials were not provided.`) or invalid (`Invalid token.`) API key.',
  403: 'Not allowed.',
  404: 'Not found, or another account\'s: `{"detail": "Not found."}`.',
  409: "A request with this Idempotency-Key is in progress (retry later), or the operation's own conflict.",
  413: 'Request body over 64 KiB.',
  415: 'Unsupported media type.',
  422: 'Idempotency-Key reused with a different request.',
  429: 'Rate limit reached: `Request was throttled. Expected available in N seconds.` Retry after `Retry-After` seconds.',
  500: 'Unexpected error; carries the request id.',
  503: 'A dependency is down or throttling; nothing was changed. Retry after `Retry-After` seconds.',
};

function errorResponse(status: number, example: unknown): Json {
  const schema = status === 400 ? { anyOf: [ref('ValidationErrors'), ref('Error')] } : status === 500 ? ref('InternalError') : ref('Error');
  const headers: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } };
  if (status === 401) headers['WWW-Authenticate'] = { schema: { type: 'string', const: 'Bearer' } };
  if (status === 503 || status === 429) headers['Retry-After'] = { schema: { type: 'integer' }, description: 'Seconds to wait.' };
  return { description: ERROR_TEXT[status] ?? 'Error.', headers, content: { 'application/json': { schema, example } } };
}

function queryParameters(op: OperationDoc): Json[] {
  if (!op.query) return [];
  return Object.entries(op.query.entries).map(([name, schema]) => {
    const json = inputSchema(schema as v.GenericSchema);
    const { description, ...rest } = json as Json & { description?: string };
    return { name, in: 'query', required: false, ...(description ? { description } : {}), schema: rest };
  });
}

function pathParameters(route: Route, op: OperationDoc): Json[] {
  return [...route.path.matchAll(/\{([^}]+)\}/g)].map((m) => {
    const name = m[1] as string;
    return {
      name,
      in: 'path',
      required: true,
      description: op.params?.[name] ?? name,
      schema: { type: 'string' },
      example: pathParameterExample(route.path, name),
    };
  });
}

function operation(route: Route, op: OperationDoc): Json {
  const auth = route.auth ?? 'api-key';
  const idempotent = (auth === 'api-key' || auth === 'session') && IDEMPOTENT_METHODS.has(route.method);
  const parameters = [...pathParameters(route, op), ...queryParameters(op)];
  if (idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });

  const successHeaders: Json = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' }, ...op.success.headers };
  if (idempotent) successHeaders['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  const responses: Json = {
    [String(op.success.status)]: {
      description: op.success.description,
      headers: successHeaders,
      ...(op.success.body ? { content: bodyContent(route, op.success.body, op.examples?.response) } : {}),
    },
  };
  const errors = new Set<number>(op.errors ?? []);
  if (auth === 'api-key' || auth === 'publishable-key' || auth === 'session') for (const s of [401, 429, 500, 503]) errors.add(s);
  if (auth === 'login' || auth === 'portal-link') for (const s of [500, 503]) errors.add(s);
  if (auth === 'portal') for (const s of [401, 429, 500, 503]) errors.add(s);
  // A dashboard session may be refused a write (its role, or a cross-site Origin); session-only routes refuse keys.
  if (auth === 'session' || (auth === 'api-key' && route.method !== 'GET')) errors.add(403);
  if (op.query) errors.add(400);
  if (op.body) for (const s of [400, 413, 415]) errors.add(s);
  if (idempotent) for (const s of [400, 409, 422]) errors.add(s);
  if (auth === 'provider-signature') for (const s of [500, 503]) errors.add(s);
  // A 400 of a list is about its query; of a write, about its body.
  const error400 = op.body || op.bodyType ? ERROR_EXAMPLES[400] : { page_size: ['Ensure this value is less than or equal to 100.'] };
  for (const status of [...errors].sort()) {
    responses[String(status)] = errorResponse(
      status,
      op.examples?.errors?.[status] ?? (status === 400 ? error400 : ERROR_EXAMPLES[status]),
    );
  }
  if ((op.body || op.bodyType) && op.examples?.request === undefined) {
    throw new Error(`OpenAPI: ${route.name} takes a request body and has no examples.request in shared/openapi/operations.ts`);
  }

  const out: Json = {
    operationId: route.name,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    ...(parameters.length > 0 ? { parameters } : {}),
    security:
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
                : [],
    responses,
  };
  if (op.body) {
    const schema =
      op.bodyType === 'application/x-www-form-urlencoded'
        ? { type: 'object', additionalProperties: { type: 'string' } }
        : inputSchema(op.body);
    out.requestBody = { required: true, content: { [op.bodyType ?? 'application/json']: { schema, example: op.examples?.request } } };
  } else if (op.bodyType === 'provider-event') {
    // Any provider's own request: a JSON event (Paddle Billing, Stripe) or a signed form (Paddle Classic),
    // verified and parsed by the provider's definition and adapter.
    out.requestBody = {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', description: "The provider's event, as it sends it." },
          example: op.examples?.request,
        },
        'application/x-www-form-urlencoded': {
          schema: {
            type: 'object',
            properties: { p_signature: { type: 'string' } },
            required: ['p_signature'],
            additionalProperties: { type: 'string' },
          },
          example: op.examples?.formRequest,
        },
      },
    };
  } else if (op.bodyType === 'application/json') {
    // A provider's own event (Paddle Billing): its shape is the provider's, verified and parsed by its adapter.
    out.requestBody = {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object', description: "The provider's event, as it sends it." },
          example: op.examples?.request,
        },
      },
    };
  } else if (op.bodyType) {
    out.requestBody = {
      required: true,
      content: {
        [op.bodyType]: {
          schema: {
            type: 'object',
            properties: { p_signature: { type: 'string' } },
            required: ['p_signature'],
            additionalProperties: { type: 'string' },
          },
          example: op.examples?.request,
        },
      },
    };
  }
  return out;
}

const EVENT_DATA: Record<EventType, ComponentName> = {
  'referral.created': 'Referral',
  'referral.converted': 'Referral',
  'reward.created': 'RewardEventData',
  'member.created': 'Member',
  'subscription.updated': 'Subscription',
  'reward.approved': 'LedgerReward',
  'reward.voided': 'LedgerReward',
  'reward.paid': 'LedgerReward',
  'payout.due': 'Payout',
  'payout.paid': 'Payout',
  'payout.failed': 'Payout',
  'payout.sent': 'Payout',
  'payout.unclaimed': 'Payout',
  'application.created': 'Application',
  'application.approved': 'Application',
  'application.rejected': 'Application',
  'fraud.flagged': 'FraudFlag',
  'reward.held': 'LedgerReward',
  'reward.released': 'LedgerReward',
};

/** Event data examples where the component's own does not fit the moment of the event. */
const EVENT_EXAMPLES: Partial<Record<EventType, unknown>> = { 'referral.created': NEW_REFERRAL, 'referral.converted': CONVERTED_REFERRAL };

/** OpenAPI 3.1 `webhooks`: what Refloop POSTs to registered endpoints. */
function webhooks(): Json {
  const out: Json = {};
  for (const type of EVENT_TYPES) {
    out[type] = {
      post: {
        summary: `${type} event`,
        description:
          'Sent to every enabled endpoint subscribed to this type. Verify `Refloop-Signature` over the raw body (docs/webhooks.md), reject timestamps older than 5 minutes, dedupe on the event id. Any 2xx acknowledges; anything else is retried with exponential backoff for up to 3 days.',
        parameters: [
          {
            name: 'Refloop-Signature',
            in: 'header',
            required: true,
            description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.<raw body>" keyed with the endpoint secret>`',
            schema: { type: 'string' },
          },
          { name: 'Refloop-Event-Id', in: 'header', required: true, schema: { type: 'string' } },
          { name: 'Refloop-Event-Type', in: 'header', required: true, schema: { type: 'string', const: type } },
        ],
        // Refloop calls the app's endpoint with none of the API's credentials: the signature header is the proof.
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  id: {
                    type: 'string',
                    pattern: '^evt_[0-9a-f]{32}$',
                    description: 'Deterministic per effect: the same for every attempt.',
                  },
                  type: { type: 'string', const: type },
                  created_at: { type: 'integer' },
                  data: ref(EVENT_DATA[type]),
                },
                required: ['id', 'type', 'created_at', 'data'],
                additionalProperties: false,
              },
              example: {
                id: 'evt_5b0f0c6ad1e24e4f9a4c2f1b7d3e9a01',
                type,
                created_at: 1767398461,
                data: EVENT_EXAMPLES[type] ?? COMPONENT_EXAMPLES[EVENT_DATA[type]],
              },
            },
          },
        },
        responses: { '200': { description: 'Any 2xx acknowledges the delivery.' } },
      },
    };
  }
  return out;
}

/** The document for a route table (the real one, or a test's with a route added). */
export function buildOpenApi(routeTable: readonly Route[], operations: Record<string, OperationDoc> = OPERATIONS): Json {
  const missing = routeTable.filter((r) => !operations[r.name]).map((r) => `${r.name} (${r.method} ${r.path})`);
  if (missing.length > 0) throw new Error(`OpenAPI: no operation metadata in shared/openapi/operations.ts for ${missing.join(', ')}`);

  const paths: Record<string, Json> = {};
  for (const route of routeTable) {
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase()] = operation(route, operations[route.name] as OperationDoc);
  }
  const schemas: Json = relocate(toJsonSchemaDefs(COMPONENTS, { target: 'draft-2020-12' }) as Json);
  for (const name of pagedComponents(routeTable.map((r) => operations[r.name] as OperationDoc))) schemas[`${name}Page`] = page(name);
  schemas.Error = { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'], additionalProperties: false };
  schemas.InternalError = {
    type: 'object',
    properties: { detail: { type: 'string', const: 'Internal server error.' }, request_id: { type: 'string' } },
    required: ['detail', 'request_id'],
    additionalProperties: false,
  };
  schemas.ValidationErrors = {
    type: 'object',
    description: 'Every invalid field with its messages; `non_field_errors` for errors of the whole body.',
    additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
    minProperties: 1,
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Refloop API',
      version: '1.0.0',
      description:
        'Referral programmes for SaaS apps billed through Stripe, Paddle Billing or Paddle Classic. Errors follow Django REST Framework: `{"detail": "..."}` or `{"<field>": ["message", ...]}`. Another account\'s ids answer 404. Amounts are strings with two decimals; timestamps are unix seconds. Every POST, PATCH and DELETE takes an `Idempotency-Key`.',
    },
    // The local gateway; the served document (functions/docs/openapi.ts) names the server it was reached on.
    servers: [{ url: 'http://127.0.0.1:3000', description: 'Local (`npm start`)' }],
    tags: [...new Set(routeTable.map((r) => (operations[r.name] as OperationDoc).tag))].map((name) => {
      const description = TAGS[name];
      if (!description) throw new Error(`OpenAPI: tag "${name}" has no description in TAGS (shared/openapi/operations.ts)`);
      return { name, description };
    }),
    paths,
    webhooks: webhooks(),
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A secret API key (`rfl_live_...`): `Authorization: Bearer <key>`.' },
        tokenAuth: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The same key as `Authorization: Token <key>`.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'refloop_session',
          description:
            "The dashboard's session (POST /auth/sessions/). Writes also need an `Origin` header of this site (CSRF); the role decides what it may do.",
        },
        portalSession: {
          type: 'http',
          scheme: 'bearer',
          description:
            "A member portal session (`rps_...`, from POST /portal/v1/sessions/): only /portal/v1/, only its member's data, 60 minutes. An API key is refused there, and a portal token on /v1/.",
        },
        publishableKey: {
          type: 'http',
          scheme: 'bearer',
          description:
            "The account's publishable key (`rfl_pub_...`), safe in web pages: only the public /js/v1/ endpoints. A secret key is refused there, and a publishable key on /v1/.",
        },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Up to 255 characters, unique per request you mean. The first response is stored for 24 hours and replayed (with `Idempotent-Replayed: true`) for retries with the same method, path and body; another request with the key answers 422; a retry while the first runs answers 409.',
          schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
        },
      },
      headers: {
        'X-Request-Id': { description: 'The request id (also in 500 bodies).', schema: { type: 'string' } },
        'Idempotent-Replayed': {
          description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
          schema: { type: 'string', const: 'true' },
        },
      },
    },
    'x-max-body-bytes': MAX_BODY_BYTES,
  };
}

let cached: Json | undefined;

/** The document of this deployment's route table, built once per container. */
export function openApiDocument(routeTable: readonly Route[]): Json {
  cached ??= buildOpenApi(routeTable);
  return cached;
}
