// A static, dependency-free HTML rendering of the OpenAPI document (served at /docs/): operations by
// tag with their parameters, bodies, responses and examples, the webhooks, and the component schemas.
// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document is walked as untyped JSON.
type Json = Record<string, any>;

const esc = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
const code = (s: string) => esc(s).replace(/`([^`]+)`/g, '<code>$1</code>');
const anchor = (s: string) => s.replace(/[^A-Za-z0-9]+/g, '-');

function schemaLink(schema: Json | undefined): string {
  if (!schema) return '';
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop() as string;
    return `<a href="#schema-${anchor(name)}">${esc(name)}</a>`;
  }
  if (schema.anyOf) return (schema.anyOf as Json[]).map(schemaLink).join(' | ');
  return `<pre>${esc(JSON.stringify(schema, null, 2))}</pre>`;
}

/** A media type's example, if any: JSON pretty-printed, text (a script, a page) as it is. */
function example(media: Json, label: string, open = false): string {
  if (!('example' in media)) return '';
  const text = typeof media.example === 'string' ? media.example : JSON.stringify(media.example, null, 2);
  return `<details class="ex"${open ? ' open' : ''}><summary>${esc(label)}</summary><pre>${esc(text)}</pre></details>`;
}

function parameters(params: Json[] | undefined, doc: Json): string {
  if (!params?.length) return '';
  const rows = params.map((p) => {
    const resolved = p.$ref ? doc.components.parameters[String(p.$ref).split('/').pop() as string] : p;
    const ex = resolved.example === undefined ? '' : `<code>${esc(String(resolved.example))}</code>`;
    return `<tr><td><code>${esc(resolved.name)}</code></td><td>${esc(resolved.in)}</td><td>${resolved.required ? 'yes' : ''}</td><td><code>${esc(JSON.stringify(resolved.schema))}</code></td><td>${code(resolved.description ?? '')}</td><td>${ex}</td></tr>`;
  });
  return `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th><th>description</th><th>example</th></tr>${rows.join('')}</table>`;
}

function operation(method: string, path: string, op: Json, doc: Json): string {
  const body = op.requestBody
    ? Object.entries(op.requestBody.content as Json)
        .map(
          ([type, c]) =>
            `<p>Body (<code>${esc(type)}</code>):</p>${schemaLink((c as Json).schema)}${example(c as Json, 'Request example', true)}`,
        )
        .join('')
    : '';
  const responses = Object.entries(op.responses as Json)
    .map(([status, r]) => {
      const content = r.content
        ? Object.values(r.content as Json)
            .map((c) => schemaLink((c as Json).schema) + example(c as Json, `Example ${status}`, Number(status) < 400))
            .join('')
        : '';
      return `<li><b>${esc(status)}</b> ${code(r.description ?? '')} ${content}</li>`;
    })
    .join('');
  const auth = op.security?.length ? 'API key (Bearer or Token)' : 'none';
  return `<section id="op-${anchor(op.operationId ?? path)}"><h3><span class="m">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p><b>${esc(op.summary)}</b>${op.description ? ` - ${code(op.description)}` : ''}</p><p>Authentication: ${auth}</p>
${parameters(op.parameters, doc)}${body}<ul>${responses}</ul></section>`;
}

export function renderReference(doc: Json): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const tag = (op as Json).tags?.[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), operation(method, path, op as Json, doc)]);
    }
  }
  const toc = [...byTag.keys()].map((t) => `<li><a href="#tag-${anchor(t)}">${esc(t)}</a></li>`).join('');
  const sections = [...byTag.entries()].map(([tag, ops]) => `<h2 id="tag-${anchor(tag)}">${esc(tag)}</h2>${ops.join('')}`).join('');
  const hooks = Object.entries((doc.webhooks ?? {}) as Json)
    .map(([name, item]) => operation('post', `(your endpoint) ${name}`, (item as Json).post, doc))
    .join('');
  const schemas = Object.entries(doc.components.schemas as Json)
    .map(([name, s]) => `<section id="schema-${anchor(name)}"><h3>${esc(name)}</h3><pre>${esc(JSON.stringify(s, null, 2))}</pre></section>`)
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} reference</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}code,pre{font:13px ui-monospace,monospace;background:#f5f5f5}pre{padding:.6em;overflow:auto}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:.25em .5em;text-align:left;vertical-align:top}.m{background:#234;color:#fff;padding:0 .4em;border-radius:3px}.ex summary{cursor:pointer;color:#345}section{border-top:1px solid #eee;padding:.5em 0}</style></head>
<body><h1>${esc(doc.info.title)} ${esc(doc.info.version)}</h1><p>${code(doc.info.description)}</p>
<p>Machine-readable: <a href="/v1/openapi.json"><code>/v1/openapi.json</code></a> (OpenAPI ${esc(doc.openapi)}).</p>
<ul>${toc}<li><a href="#webhooks">Webhooks (events Refloop sends)</a></li><li><a href="#schemas">Schemas</a></li></ul>
${sections}<h2 id="webhooks">Webhooks</h2>${hooks}<h2 id="schemas">Schemas</h2>${schemas}</body></html>`;
}
