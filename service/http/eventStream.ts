// Server-Sent Events: a response written event by event as its events are produced. What a stream says is the
// route's; this module only negotiates it, frames events, writes them flushed, and notices a client going away.
import { once } from 'node:events';
import type { AppContext } from './context.ts';

/** Whether the client asked for an event stream by its Accept header (preferred to JSON, by quality and order). */
export function acceptsEventStream(ctx: AppContext): boolean {
  return ctx.accepts('application/json', 'text/event-stream') === 'text/event-stream';
}

/** One event: its name and one `data:` line of JSON (JSON.stringify never writes a raw line break). */
export function sseEvent(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** A comment line: ignored by event-stream parsers, visible to someone reading the stream (curl -N). */
export function sseComment(text: string): string {
  return `: ${text.replaceAll('\r', ' ').replaceAll('\n', ' ')}\n\n`;
}

/**
 * A signal aborted when the client goes away before the response is complete (the connection closes first): the
 * work producing the response can stop.
 */
export function clientGone(ctx: AppContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort(new Error('the client closed the connection'));
  });
  return controller.signal;
}

/**
 * Answers 200 with `events`, each written (and so sent) as soon as it is produced; resolves once the last is written
 * or the client has gone. Koa's own response handling is bypassed (`ctx.respond = false`), so the request's
 * middleware (access log, metrics) runs until the stream ends. `events` must not throw: an error after the first
 * byte can only be told in an event of the stream itself.
 */
export async function writeEventStream(
  ctx: AppContext,
  events: AsyncIterable<string>,
  clientSignal: AbortSignal,
): Promise<void> {
  ctx.status = 200;
  ctx.set('Content-Type', 'text/event-stream; charset=utf-8');
  // Never cached or transformed (a compressing proxy would hold events back), nor buffered by nginx-style proxies.
  ctx.set('Cache-Control', 'no-store, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.respond = false;
  const response = ctx.res;
  response.flushHeaders();
  for await (const event of events) {
    if (clientSignal.aborted || response.destroyed) break;
    if (!response.write(event)) {
      try {
        await once(response, 'drain', { signal: clientSignal });
      } catch {
        break;
      }
    }
  }
  if (!response.destroyed) response.end();
}
