// What a KB's owner learns from the ratings of answers that searched it: how many were rated up and down, and the
// questions rated down (what was asked, what was searched, the comment, when). Never who asked, and never the answer:
// a turn may have searched other KBs too, whose passages the owner may not read.
import { authorizeManage } from '../policies/knowledgeBases.ts';
import type { ConversationMessageRecord, KnowledgeBaseRecord, Principal, Store } from '../store/index.ts';
import { questionOf } from './conversations.ts';

/** The questions rated down that the view lists: the most recent ones. */
export const DOWN_RATED_SHOWN = 100;

export interface DownRatedQuestion {
  question: string;
  standaloneQuery: string;
  comment: string | null;
  ratedAt: Date;
}

export interface KnowledgeBaseRatings {
  knowledgeBase: KnowledgeBaseRecord;
  up: number;
  down: number;
  /** Newest rating first, at most DOWN_RATED_SHOWN. */
  downRated: DownRatedQuestion[];
}

const ratedAt = (message: ConversationMessageRecord) => message.feedback?.created_at.getTime() ?? 0;

/** The KB's owner only (policies/knowledgeBases.ts authorizeManage: a reader is 403, anyone else 404). */
export async function knowledgeBaseRatings(store: Store, user: Principal, id: string): Promise<KnowledgeBaseRatings> {
  const knowledgeBase = authorizeManage(user, await store.findLiveKnowledgeBase(id), id);
  const rated = await store.listRatedAnswers({ knowledgeBaseId: id });
  const down = rated.filter((message) => message.feedback?.rating === 'down');
  const shown = down.sort((a, b) => ratedAt(b) - ratedAt(a)).slice(0, DOWN_RATED_SHOWN);
  const questions = await Promise.all(shown.map((answer) => questionOf(store, answer)));
  return {
    knowledgeBase,
    up: rated.length - down.length,
    down: down.length,
    downRated: shown.map((answer, index) => ({
      question: questions[index],
      standaloneQuery: answer.standalone_query ?? '',
      comment: answer.feedback?.comment ?? null,
      ratedAt: answer.feedback?.created_at ?? answer.created_at,
    })),
  };
}
