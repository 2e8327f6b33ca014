// What /api/web adds to the conversation answers (routes/conversations.ts): a citation's pages, as the web realm's
// /query answer has them (webApp.schema.ts webCitation), and the owner's view of a KB's answer ratings
// (routes/knowledgeBaseRatings.ts). The web app's types are generated from these (clients/web/generate.ts).
import { z } from 'zod';
import { timestamp } from './common.schema.ts';
import { answerMessage, conversation, conversationMessage, storedCitation } from './conversations.schema.ts';
import { webCitation } from './webApp.schema.ts';

const pages = { page_start: webCitation.shape.page_start, page_end: webCitation.shape.page_end };

export const webStoredCitation = storedCitation
  .extend(pages)
  .meta({ id: 'WebStoredCitation', description: 'A citation of a stored answer, with the pages it cites.' });

export const webConversationMessage = conversationMessage
  .extend({ citations: z.array(webStoredCitation).optional().meta({ description: 'Answers only' }) })
  .meta({ id: 'WebConversationMessage', description: 'A question or an answer, its citations with their pages.' });

export const webConversationWithMessagesResponse = z
  .object({ conversation: conversation.extend({ messages: z.array(webConversationMessage) }) })
  .meta({ id: 'WebConversationWithMessages', description: 'A conversation and its messages, oldest first.' });

export const webTurnResponse = z
  .object({
    message: answerMessage
      .extend({ citations: z.array(webCitation) })
      .meta({ id: 'WebAnswerMessage', description: 'A turn’s answer, its citations with their pages.' }),
  })
  .meta({ id: 'WebTurnResponse', description: 'A turn answered.' });

export const downRatedQuestion = z
  .object({
    question: z.string().meta({ description: 'The question as it was asked' }),
    standalone_query: z.string().meta({ description: 'What retrieval searched for it' }),
    comment: z.string().nullable().meta({ description: 'The comment given with the rating, or null' }),
    rated_at: timestamp('When it was rated down'),
  })
  .meta({ id: 'DownRatedQuestion', description: 'A question whose answer was rated down; never who asked it.' });

export const knowledgeBaseRatingsResponse = z
  .object({
    ratings: z.object({
      up: z.number().int().min(0).meta({ description: 'Answers that searched the KB, rated up' }),
      down: z.number().int().min(0).meta({ description: 'Answers that searched the KB, rated down' }),
      down_rated: z
        .array(downRatedQuestion)
        .meta({ description: 'The questions rated down, most recently rated first (at most 100)' }),
    }),
  })
  .meta({
    id: 'KnowledgeBaseRatings',
    description: "The ratings of the answers that searched a KB: its owner's view.",
  });
