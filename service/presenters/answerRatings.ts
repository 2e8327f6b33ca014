import type { z } from 'zod';
import type { KnowledgeBaseRatings } from '../commands/answerRatings.ts';
import type { knowledgeBaseRatingsResponse } from '../http/routes/webConversations.schema.ts';

/** Counts and the questions rated down: no user, conversation or message id. */
export function presentKnowledgeBaseRatings(
  ratings: KnowledgeBaseRatings,
): z.input<typeof knowledgeBaseRatingsResponse> {
  return {
    ratings: {
      up: ratings.up,
      down: ratings.down,
      down_rated: ratings.downRated.map((entry) => ({
        question: entry.question,
        standalone_query: entry.standaloneQuery,
        comment: entry.comment,
        rated_at: entry.ratedAt.toISOString(),
      })),
    },
  };
}
