// Every /api/v1 response a test provokes is checked against the OpenAPI description the server publishes
// (service/http/openapi/): its status is one the operation declares, its Content-Type one declared for that status,
// and its body valid against the declared schema (JSON Schema 2020-12, with formats). The in-process apps of
// helpers/app.ts are wrapped with checkResponses() at the front of their middleware, and the API child processes of
// helpers/apiProcess.ts record what their call() sees; violations are listed, all of them, when the file's tests are
// done (an after.always hook this module registers) and by the app's close(). So the spec cannot drift from the
// server without some test failing, and no test has to ask for it.
//
// Not checked: bodies of text/event-stream responses (the streaming tests check their events), /api/v1/openapi.json
// itself, requests a test sends with raw sockets or fetch() to an API child process (only its call() is seen), and
// /api/web (the web app's own API, outside the contract).
import test from 'ava';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';
import type { Middleware } from 'koa';
import { openApiDocument } from '../../service/http/openapi/document.ts';
import { OPENAPI_PATH } from '../../service/http/openapi/routes.ts';

// ajv-formats is CommonJS with `exports.default`: under Node's ESM (and TypeScript's nodenext) the default import is
// module.exports, whose `default` is the plugin.
const addFormats = addFormatsPlugin.default;

export interface ObservedResponse {
  method: string;
  /** The request path without the query string. */
  path: string;
  status: number;
  /** The Content-Type header, if any. */
  contentType: string | null;
  /** The body as the client sees it: parsed JSON, text, or null when empty. */
  body: unknown;
  /** Where it was seen (the in-process app, an API child process). */
  where: string;
}

interface MediaTypeObject {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaTypeObject>;
}
interface Operation {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}

interface Route {
  method: string;
  template: string;
  segments: string[];
  operation: Operation;
}

const COMPONENTS_ID = 'https://kbqa.invalid/openapi/components';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** The document's `#/components/schemas/X` refs, pointed at the one schema holding every component. */
function relocateRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relocateRefs);
  if (value === null || typeof value !== 'object') return value;
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    copy[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${inner.slice('#/components/schemas/'.length)}`
        : relocateRefs(inner);
  }
  return copy;
}

export class SpecChecker {
  private readonly routes: Route[] = [];
  private readonly ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    document: {
      paths?: Record<string, unknown>;
      components?: { schemas?: Record<string, unknown> };
    } = openApiDocument().document,
  ) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: relocateRefs(document.components?.schemas ?? {}) });
    for (const [template, item] of Object.entries(document.paths ?? {})) {
      for (const method of METHODS) {
        const operation = (item as Record<string, Operation | undefined>)[method];
        if (operation)
          this.routes.push({ method: method.toUpperCase(), template, segments: template.split('/'), operation });
      }
    }
  }

  /** The operations whose path template matches (a trailing slash is the same path, as for the router). */
  private matching(path: string): Route[] {
    const segments = (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path).split('/');
    return this.routes.filter(
      (route) =>
        route.segments.length === segments.length &&
        route.segments.every((segment, index) =>
          segment.startsWith('{') && segment.endsWith('}') ? segments[index] !== '' : segment === segments[index],
        ),
    );
  }

  private validator(key: string, schema: unknown): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(relocateRefs(schema) as object);
      this.validators.set(key, validate);
    }
    return validate;
  }

  /** What is wrong with a response, or null when it conforms. */
  problem(observed: ObservedResponse): string | null {
    const routes = this.matching(observed.path);
    const method = observed.method === 'HEAD' ? 'GET' : observed.method;
    const route = routes.find((candidate) => candidate.method === method);
    if (!route) {
      // No operation: the router's 404 (no such path) or 405 (no such method), in the envelope; OPTIONS is answered
      // by the router with the Allow header and no body.
      if (observed.method === 'OPTIONS' && routes.length > 0 && (observed.status === 200 || observed.status === 204))
        return null;
      const expected = routes.length > 0 ? [404, 405] : [404];
      if (!expected.includes(observed.status))
        return `no operation ${method} ${observed.path} in the spec, and the status is ${observed.status}, not ${expected.join(' or ')}`;
      return this.bodyProblem('Error', { schema: { $ref: '#/components/schemas/Error' } }, observed);
    }
    const declared =
      route.operation.responses[String(observed.status)] ??
      route.operation.responses[`${String(observed.status)[0]}XX`] ??
      route.operation.responses.default;
    const name = route.operation.operationId ?? `${route.method} ${route.template}`;
    if (!declared) {
      return `${name}: status ${observed.status} is not declared (declared: ${Object.keys(route.operation.responses).join(', ')})`;
    }
    if (observed.body === null && !declared.content) return null;
    const mediaType = (observed.contentType ?? '').split(';')[0].trim().toLowerCase();
    const content = declared.content ?? {};
    const media = content[mediaType];
    if (!media) {
      return `${name} ${observed.status}: Content-Type ${observed.contentType ?? '(none)'} is not declared (declared: ${Object.keys(content).join(', ') || 'no body'})`;
    }
    if (mediaType === 'text/event-stream') return null;
    return this.bodyProblem(`${name} ${observed.status} ${mediaType}`, media, observed);
  }

  /** What is wrong with a value against a schema of the document (a request example, say), or null. */
  schemaProblem(schema: unknown, value: unknown): string | null {
    const validate = this.ajv.compile(relocateRefs(schema) as object);
    return validate(value) ? null : this.ajv.errorsText(validate.errors);
  }

  private bodyProblem(key: string, media: MediaTypeObject, observed: ObservedResponse): string | null {
    if (media.schema === undefined) return null;
    const validate = this.validator(key, media.schema);
    if (validate(observed.body)) return null;
    const errors = (validate.errors ?? [])
      .slice(0, 8)
      .map(
        (error) =>
          `${error.instancePath || '(body)'} ${error.message ?? ''}${error.params && Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ''}`,
      )
      .join('; ');
    return `${key}: the body does not match the schema: ${errors}; body: ${JSON.stringify(observed.body)?.slice(0, 600)}`;
  }
}

let checker: SpecChecker | null = null;
const unreported: string[] = [];

/** Checks a response against the spec; a violation is kept to be reported when the file's tests are done. */
export function recordResponse(observed: ObservedResponse): void {
  if (!observed.path.startsWith('/api/v1/') || observed.path === OPENAPI_PATH) return;
  checker ??= new SpecChecker();
  const problem = checker.problem(observed);
  if (problem)
    unreported.push(`${observed.method} ${observed.path} → ${observed.status} (${observed.where}): ${problem}`);
}

/** The violations seen since the last call, as one error (null when none): each distinct one once, at most 40. */
export function takeViolations(): Error | null {
  if (unreported.length === 0) return null;
  const seen = unreported.splice(0, unreported.length);
  const distinct = [...new Set(seen)];
  const shown = distinct.slice(0, 40);
  const more = distinct.length > shown.length ? `\n… and ${distinct.length - shown.length} more` : '';
  return new Error(
    `${seen.length} response(s) do not conform to the OpenAPI description (service/http/openapi/: fix the spec, or report the server):\n- ${shown.join('\n- ')}${more}`,
  );
}

/** Koa middleware for the front of an app: records every /api/v1 response it sends. */
export function checkResponses(where: string): Middleware {
  return async (ctx, next) => {
    await next();
    if (!ctx.path.startsWith('/api/v1/')) return;
    let body: unknown = ctx.body ?? null;
    const contentType = ctx.response.get('Content-Type') || null;
    if (body !== null && typeof body === 'object' && typeof (body as { pipe?: unknown }).pipe === 'function') {
      body = '(a stream)';
    } else if (Buffer.isBuffer(body)) {
      body = body.toString('utf8');
    } else if (body !== null && typeof body === 'object') {
      // What the client receives: the JSON text, parsed again (Dates become strings, undefined fields go).
      body = JSON.parse(JSON.stringify(body));
    } else if (typeof body === 'string' && /json/.test(contentType ?? '')) {
      try {
        body = JSON.parse(body);
      } catch {
        /* checked as text */
      }
    }
    recordResponse({ method: ctx.method, path: ctx.path, status: ctx.status, contentType, body, where });
  };
}

// Every file that starts an app has its responses checked when its tests are done.
test.after.always('every /api/v1 response conforms to the OpenAPI description', (t) => {
  const violations = takeViolations();
  if (violations) t.fail(violations.message);
  else t.pass();
});
