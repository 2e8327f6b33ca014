// Conversations and their messages. Hot paths are _id probes (a conversation, a message): a turn reads only its
// conversation, which keeps the last turns (recent_turns); a conversation's messages come back by
// (conversation_id, position) when it is read whole, which is also unique: a turn's place is claimed by its insert.
import type { Filter } from 'mongodb';
import { ConflictError } from '../errors.ts';
import type { Collections } from './mongo.ts';
import { isDuplicateKeyError, storeCall } from './mongo.ts';
import { decodeCursor, encodeCursor, type Page } from './pagination.ts';
import type { ConversationMessageRecord, ConversationRecord, MessageFeedback, RecentTurn } from './records.ts';

const RECENTLY_UPDATED_FIRST = { updated_at: -1, _id: -1 } as const;

/** Keyset paging over (updated_at desc, _id desc), with the cursor format of store/pagination.ts. */
function afterUpdatedCursor(cursor: string): Filter<ConversationRecord> {
  const position = decodeCursor(cursor);
  return {
    $or: [{ updated_at: { $lt: position.created_at } }, { updated_at: position.created_at, _id: { $lt: position.id } }],
  };
}

export interface FeedbackQuery {
  knowledgeBaseId?: string;
  since?: Date;
  rating?: 'up' | 'down';
}

export function conversationsStore(collections: Collections) {
  const { conversations, conversationMessages: messages } = collections;
  return {
    insertConversation: (record: ConversationRecord) => storeCall(() => conversations.insertOne(record)),

    /** The conversation if it is this user's: one _id probe, the owner checked here (anyone else's is null). */
    async findConversationOfUser(id: string, userId: string): Promise<ConversationRecord | null> {
      const record = await storeCall(() => conversations.findOne({ _id: id }));
      return record && record.user_id === userId ? record : null;
    },

    countConversationsOfUser: (userId: string) => storeCall(() => conversations.countDocuments({ user_id: userId })),

    async listConversationsOfUser(
      userId: string,
      page: { limit?: number; cursor?: string },
    ): Promise<Page<ConversationRecord>> {
      const filter: Filter<ConversationRecord> = page.cursor
        ? { user_id: userId, ...afterUpdatedCursor(page.cursor) }
        : { user_id: userId };
      // Without the recent turns: a list shows titles, and a page of them would carry up to four answers each.
      let cursor = conversations.find(filter, { projection: { recent_turns: 0 } }).sort(RECENTLY_UPDATED_FIRST);
      if (page.limit !== undefined) cursor = cursor.limit(page.limit + 1);
      const records = await storeCall(() => cursor.toArray());
      if (page.limit === undefined || records.length <= page.limit) return { items: records, nextCursor: null };
      const items = records.slice(0, page.limit);
      const last = items[items.length - 1];
      return { items, nextCursor: encodeCursor({ created_at: last.updated_at, id: last._id }) };
    },

    async renameConversation(id: string, title: string, at: Date): Promise<void> {
      await storeCall(() => conversations.updateOne({ _id: id }, { $set: { title, updated_at: at } }));
    },

    /** Messages first, then the conversation: an interrupted delete leaves a conversation to delete again. */
    async deleteConversation(id: string): Promise<void> {
      await storeCall(() => messages.deleteMany({ conversation_id: id }));
      await storeCall(() => conversations.deleteOne({ _id: id }));
    },

    /** The last `count` messages of a conversation, oldest first (count 0: all of them). */
    async listMessages(conversationId: string, count = 0): Promise<ConversationMessageRecord[]> {
      let cursor = messages.find({ conversation_id: conversationId }).sort({ position: -1 });
      if (count > 0) cursor = cursor.limit(count);
      return (await storeCall(() => cursor.toArray())).reverse();
    },

    /**
     * A turn's question and answer, and the conversation's counters and recent turns, written at once (one round trip
     * on a turn's path, not two). The (conversation_id, position) index is unique: a turn answered meanwhile took
     * these places, and this one is refused (409). A refused or failed insert leaves the recent turns unset, so the
     * next turn reads them from the stored messages, and the count at least past the places taken: a count left
     * behind by a failed update (messages stored, counter not) would otherwise refuse every next turn.
     */
    async appendTurn(
      conversation: ConversationRecord,
      turn: [ConversationMessageRecord, ConversationMessageRecord],
      update: { title: string | null; at: Date; recentTurns: RecentTurn[] },
    ): Promise<void> {
      // The turns up to this answer (2n+1: n+1). Conversations stored before counted (2n+1)/2+1, a half more, and
      // so left gaps in the positions; rounded up here, their next question lands past every place taken.
      const turns = Math.ceil((turn[1].position + 1) / 2);
      const [inserted, counted] = await Promise.allSettled([
        storeCall(() => messages.insertMany(turn, { ordered: true })),
        storeCall(() =>
          conversations.updateOne(
            { _id: conversation._id },
            { $set: { title: update.title, updated_at: update.at, turns, recent_turns: update.recentTurns } },
          ),
        ),
      ]);
      if (inserted.status === 'rejected') {
        await storeCall(() =>
          conversations.updateOne({ _id: conversation._id }, { $max: { turns }, $unset: { recent_turns: '' } }),
        ).catch(() => undefined);
        if (!isDuplicateKeyError(inserted.reason)) throw inserted.reason;
        throw new ConflictError(
          `conversation ${conversation._id}: another turn was answered meanwhile; ask again to continue from it`,
        );
      }
      if (counted.status === 'rejected') throw counted.reason;
    },

    findMessage: (id: string) => storeCall(() => messages.findOne({ _id: id })),

    async setMessageFeedback(id: string, feedback: MessageFeedback | null): Promise<void> {
      await storeCall(() => messages.updateOne({ _id: id }, { $set: { feedback } }));
    },

    /** Rated answers for `kbqa feedback export`, oldest first (an admin command: never on a request path). */
    listRatedAnswers(query: FeedbackQuery): Promise<ConversationMessageRecord[]> {
      const filter: Filter<ConversationMessageRecord> = { role: 'assistant', feedback: { $ne: null } };
      if (query.rating) filter['feedback.rating'] = query.rating;
      if (query.since) filter['feedback.created_at'] = { $gte: query.since };
      if (query.knowledgeBaseId) filter.knowledge_base_ids = query.knowledgeBaseId;
      return storeCall(() => messages.find(filter).sort({ created_at: 1, _id: 1 }).toArray());
    },

    /** The messages just before `position` in a conversation (the question of a rated answer). */
    findMessageAt: (conversationId: string, position: number) =>
      storeCall(() => messages.findOne({ conversation_id: conversationId, position })),

    countConversations: () => storeCall(() => conversations.estimatedDocumentCount()),

    /** For `kbqa doctor`: every conversation's owner, and every message's conversation (admin scans). */
    listConversationOwners: () =>
      storeCall(() => conversations.find({}, { projection: { _id: 1, user_id: 1 } }).toArray()),
    listMessageConversations: () =>
      storeCall(() => messages.find({}, { projection: { _id: 1, conversation_id: 1 } }).toArray()),
    findConversation: (id: string) => storeCall(() => conversations.findOne({ _id: id }, { projection: { _id: 1 } })),
    async deleteMessages(ids: string[]): Promise<number> {
      if (ids.length === 0) return 0;
      return (await storeCall(() => messages.deleteMany({ _id: { $in: ids } }))).deletedCount;
    },

    /** A deleted account's conversations: messages (their feedback with them) first, then the conversations. */
    async deleteConversationsOfUser(userId: string): Promise<number> {
      await storeCall(() => messages.deleteMany({ user_id: userId }));
      return (await storeCall(() => conversations.deleteMany({ user_id: userId }))).deletedCount;
    },
  };
}
