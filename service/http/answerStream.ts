// A streamed answer's Server-Sent Events, shared by POST /query and a conversation's turn: `retrieval`, `delta`…,
// then `done` (whose data each route presents: its own non-streamed body) or `error`. The first step is awaited
// before anything is sent: its failures (validation, access, an outage) are ordinary JSON error responses.
import type { z } from 'zod';
import type { QueryResult, QueryStep } from '../commands/answerQuestion.ts';
import type { QueryTimings } from '../queryTimings.ts';
import { presentChunk, presentCitation } from '../presenters/query.ts';
import type { AppContext, AppDeps } from './context.ts';
import { clientGone, sseComment, sseEvent, writeEventStream } from './eventStream.ts';
import { errorResponse } from './middleware/errors.ts';
import type { queryStreamDeltaEvent, queryStreamRetrievalEvent } from './routes/query.schema.ts';

/** Per-stage timings for operators and benchmarks (not part of the JSON contract), as a Server-Timing value. */
export function serverTiming(timings: QueryTimings): string {
  const stages = [
    `embed;dur=${timings.embedMs.toFixed(1)}`,
    `search;dur=${timings.searchMs.toFixed(1)}`,
    `answer;dur=${timings.answerMs.toFixed(1)}`,
    ...(timings.firstDeltaMs !== undefined ? [`first-delta;dur=${timings.firstDeltaMs.toFixed(1)}`] : []),
  ];
  return stages.join(', ');
}

/** Counts an answered question's stages (and checked sentences) in the metrics. */
export function observeAnswer(deps: AppDeps, result: QueryResult): void {
  deps.metrics.observeQueryStages(result.timings);
  if (result.sentences) deps.metrics.countCheckedSentences(result.sentences);
}

type Progress = Exclude<QueryStep, { type: 'done' }>;

function presentProgress(step: Progress, citationPages: boolean): string {
  if (step.type === 'retrieval') {
    return sseEvent('retrieval', {
      passages: step.passages.map((chunk, index) => ({ number: index + 1, ...presentChunk(chunk) })),
    } satisfies z.input<typeof queryStreamRetrievalEvent>);
  }
  return sseEvent('delta', {
    text: step.text,
    citations: step.citations.map((citation) => presentCitation(citation, { citationPages })),
  } satisfies z.input<typeof queryStreamDeltaEvent>);
}

/**
 * Streams `steps` (started by `start` with the client-gone signal). `done` turns the last step into its result (for
 * the timings and metrics) and the `done` event's data.
 */
export async function streamAnswerSteps<Done extends { type: 'done' }>(
  ctx: AppContext,
  deps: AppDeps,
  start: (signal: AbortSignal) => AsyncGenerator<Progress | Done, void, undefined>,
  done: (step: Done, citationPages: boolean) => { result: QueryResult; body: unknown },
): Promise<void> {
  const signal = clientGone(ctx);
  const citationPages = ctx.state.realm === 'web';
  const steps = start(signal);
  const first = await steps.next();

  const present = (step: Progress | Done): string[] => {
    if (step.type !== 'done') return [presentProgress(step as Progress, citationPages)];
    const { result, body } = done(step as Done, citationPages);
    observeAnswer(deps, result);
    // The timings ride in a comment (parsers skip it); result.timings is the whole request's.
    return [sseComment(`server-timing ${serverTiming(result.timings)}`), sseEvent('done', body)];
  };

  async function* events(): AsyncGenerator<string> {
    try {
      for (let step = first; !step.done; step = await steps.next()) yield* present(step.value);
    } catch (error) {
      const request = { requestId: ctx.state.requestId, method: ctx.method, path: ctx.path, realm: ctx.state.realm };
      if (signal.aborted) {
        deps.logger.info({ requestId: request.requestId }, 'query stream cancelled: the client went away');
        return;
      }
      const { body } = errorResponse(error, request, {
        logger: deps.logger,
        maxBodyBytes: deps.config.limits.maxBodyBytes,
        metrics: deps.metrics,
      });
      yield sseEvent('error', body);
    } finally {
      await steps.return();
    }
  }

  await writeEventStream(ctx, events(), signal);
}
