// The answers of /api/web that /api/v1 does not give: the web app's own endpoints (session, setup, accounts, keys,
// sharing, limits, a document's content), and the fields the web realm adds to the shared resources (a document's
// origin and place in line, a KB's pending mark, a citation's pages). The presenters and routes are typed against
// these; the web app's types are generated from them (clients/web/generate.ts → web/src/api/generated.ts).
import { z } from 'zod';
import { resourceId, timestamp } from './common.schema.ts';
import { documentWithStatus } from './documents.schema.ts';
import { knowledgeBase, knowledgeBaseListItem } from './knowledgeBases.schema.ts';
import { citation, queryResponse } from './query.schema.ts';

// ── Session, setup and accounts (routes/webSession.ts, routes/admin.ts) ────────────────────────────────────────────

export const sessionUser = z
  .object({ id: resourceId('User id'), email: z.string(), is_admin: z.boolean() })
  .meta({ id: 'SessionUser', description: 'The signed-in user.' });

/** Every answer that signs someone in, and GET /session: the CSRF token goes on every later state-changing call. */
export const sessionResponse = z
  .object({ user: sessionUser, csrf_token: z.string() })
  .meta({ id: 'SessionResponse', description: "The signed-in user and the session's CSRF token." });

export const setupStatus = z.object({ first_account_needed: z.boolean(), sign_up_open: z.boolean() }).meta({
  id: 'SetupStatus',
  description: 'Whether the first account is still to be made, and whether anyone may sign up.',
});

export const passwordLinkInfo = z
  .object({ email: z.string(), purpose: z.enum(['invite', 'reset']) })
  .meta({ id: 'PasswordLinkInfo', description: 'Whom a set-password link is for, and why.' });

export const signedOutResponse = z.object({ signed_out: z.literal(true) });
export const signedOutEverywhereResponse = z.object({
  signed_out: z.number().int().min(0),
  api_keys_revoked: z.number().int().min(0),
});
export const passwordChangedResponse = z.object({
  changed: z.literal(true),
  api_keys_revoked: z.number().int().min(0),
});

export const userReference = z
  .object({ id: resourceId('User id'), email: z.string() })
  .meta({ id: 'UserReference', description: 'A user, by id and email.' });

export const adminUser = z
  .object({
    id: resourceId('User id'),
    email: z.string(),
    is_admin: z.boolean(),
    has_password: z.boolean(),
    created_at: timestamp('Account creation'),
  })
  .meta({
    id: 'AdminUser',
    description: 'A user as an administrator lists them: never the password hash, only whether one is set.',
  });
export const adminUsersResponse = z.object({ users: z.array(adminUser) });

export const invitationResponse = z
  .object({
    user: userReference,
    link: z.string().meta({ description: '`<origin>/set-password#token=…`: shown once, there is no mail server' }),
    expires_at: timestamp('When the link stops working'),
  })
  .meta({ id: 'Invitation', description: 'A user invited, and the one-time link that sets their password.' });

export const passwordResetResponse = invitationResponse.meta({
  id: 'PasswordReset',
  description:
    "A user's one-time reset link (replacing any earlier link of theirs); using it ends every session of theirs.",
});

export const accountDeletedResponse = z
  .object({
    deleted: z.literal(true),
    api_keys_revoked: z.number().int().meta({ description: 'Live API keys of the account revoked' }),
    sessions_ended: z.number().int().meta({ description: 'Web sessions of the account ended' }),
    conversations_deleted: z.number().int().meta({ description: 'Conversations removed, with messages and feedback' }),
    knowledge_bases_deleted: z.number().int().meta({
      description: 'KBs it owned, deleted as a KB deletion does (soft; purged with their documents by the sweep)',
    }),
  })
  .meta({ id: 'AccountDeleted', description: 'An account deleted by an administrator, and what went with it.' });

// ── API keys (routes/apiKeys.ts) ───────────────────────────────────────────────────────────────────────────────

export const apiKey = z
  .object({
    id: resourceId('Key id'),
    name: z.string(),
    masked: z.string().meta({ description: 'The key with all but its ends hidden' }),
    created_at: timestamp('Creation'),
    last_used_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .meta({ id: 'ApiKey', description: 'An API key as its owner lists it: the masked form only.' });
export const apiKeyListResponse = z.object({ api_keys: z.array(apiKey) });
export const createdApiKeyResponse = z
  .object({ api_key: apiKey, key: z.string().meta({ description: 'The full key: in this one response only' }) })
  .meta({ id: 'CreatedApiKey', description: 'A key just created, with its full value.' });
export const apiKeyRevokedResponse = z.object({ revoked: z.literal(true) });

// ── Sharing and recently deleted KBs (routes/knowledgeBaseSharing.ts) ────────────────────────────────────────────

const pending = z.boolean().meta({
  description:
    'Shared with the user and not accepted yet: searched only when named. Always false in the list, which leaves such KBs out (GET /api/web/invitations lists them)',
});

export const deletedKnowledgeBase = z
  .object({
    id: resourceId('KB id'),
    name: z.string(),
    description: z.string(),
    deleted_at: timestamp('When it was deleted'),
    restorable_until: timestamp('Until when its owner can restore it'),
  })
  .meta({ id: 'DeletedKnowledgeBase', description: 'A soft-deleted KB its owner can still restore.' });
export const deletedKnowledgeBaseListResponse = z.object({ knowledge_bases: z.array(deletedKnowledgeBase) });

export const sharedUser = userReference
  .extend({
    pending: pending.meta({
      description: 'Shared before invitations were recorded and not accepted yet (newer ones are in `invitations`)',
    }),
  })
  .meta({ id: 'SharedUser', description: 'A person a KB is shared with.' });

export const sentInvitation = z
  .object({
    id: resourceId('Invitation id'),
    email: z.string(),
    invited_at: timestamp('When it was sent'),
  })
  .meta({
    id: 'SentInvitation',
    description:
      'An invitation not answered yet, by address alone: whether an account has the address is not said (docs/security.md § Sharing).',
  });

/** The share call's answer: the same whether or not an account has the address. */
export const invitationSentResponse = z
  .object({ invitation: z.object({ email: z.string().meta({ description: 'The address, trimmed, lower case' }) }) })
  .meta({ id: 'InvitationSent', description: 'The invitation is sent (202, whatever the address).' });

export const sharing = z
  .object({
    users: z.array(sharedUser),
    invitations: z.array(sentInvitation),
    organisation: z.object({ id: resourceId('Organisation id'), name: z.string(), shared: z.boolean() }).nullable(),
    is_library: z.boolean(),
  })
  .meta({ id: 'Sharing', description: "Whom an owner's KB is shared with, and whom it waits for." });
export const unsharedResponse = z.object({ unshared: z.literal(true) });
export const invitationWithdrawnResponse = z.object({ withdrawn: z.literal(true) });

// ── Invitations received, blocked senders (routes/shareInvitations.ts) ─────────────────────────────────────────

export const receivedInvitation = z
  .object({
    knowledge_base: z.object({ id: resourceId('KB id'), name: z.string(), description: z.string() }),
    shared_by: userReference.meta({ description: 'Who shared it: its owner' }),
    invited_at: z
      .string()
      .nullable()
      .meta({ description: 'When it was shared (ISO 8601); null for a share made before this was recorded' }),
  })
  .meta({
    id: 'ReceivedInvitation',
    description: 'A KB shared with the user that they have not accepted: not in their list of KBs until they do.',
  });
export const receivedInvitationsResponse = z.object({ invitations: z.array(receivedInvitation) });

export const blockedSender = z
  .object({ user: userReference, blocked_at: timestamp('When it was blocked') })
  .meta({ id: 'BlockedSender', description: 'Someone whose invitations do not reach the user.' });
export const blockedSendersResponse = z.object({ blocked_senders: z.array(blockedSender) });
export const blockedSenderResponse = z.object({ blocked_sender: blockedSender });
export const unblockedResponse = z.object({ unblocked: z.literal(true) });
export const organisationSharedResponse = z.object({ shared: z.boolean() });

// ── Limits and a document's content (routes/uploads.ts, routes/documentContent.ts) ────────────────────────────────

export const limits = z
  .object({
    max_upload_bytes: z.number().int().min(0).meta({ description: "A PDF upload's file size" }),
    max_content_bytes: z.number().int().min(0).meta({ description: "A text document's `content`" }),
  })
  .meta({ id: 'Limits', description: 'What the server accepts, checked before a file is sent.' });

export const documentPassage = z
  .object({
    chunk_index: z.number().int().min(0),
    heading_path: z.array(z.string()),
    page_start: z
      .number()
      .int()
      .min(1)
      .nullable()
      .meta({ description: 'PDF pages (1-based, inclusive); null for text' }),
    page_end: z.number().int().min(1).nullable(),
    text: z.string(),
  })
  .meta({ id: 'DocumentPassage', description: "A passage (chunk) of a document's live version, in reading order." });

export const documentContent = z
  .object({
    knowledge_base: z.object({ id: resourceId('KB id'), name: z.string() }),
    content: z
      .string()
      .nullable()
      .meta({ description: "The text as it was sent; null for a PDF (its passages carry the pages' text)" }),
    passages: z.array(documentPassage).meta({ description: 'The first passages (at most 500), in reading order' }),
    passages_total: z.number().int().min(0),
  })
  .meta({ id: 'DocumentContent', description: 'What the document page shows.' });

// ── The web realm's fields on the shared resources ─────────────────────────────────────────────────────────────

/** What presenters/documents.ts webDocumentFields adds to a document on /api/web. */
export const webDocumentFields = z.object({
  origin: z
    .enum(['paste', 'file', 'api'])
    .meta({ description: 'Where it was added: the paste form, a file, or the Developer API' }),
  retryable: z
    .boolean()
    .optional()
    .meta({ description: 'When failed: whether a retry can pass (false: the file itself is the problem)' }),
  ahead: z.number().int().min(0).optional().meta({ description: 'While queued: documents the runners take before it' }),
  scanned_pages: z
    .array(
      z.object({
        page: z.number().int().min(1),
        confidence: z.number().min(0).max(100),
        low_confidence: z.boolean().meta({ description: 'Under 70: check this page against the original' }),
      }),
    )
    .optional()
    .meta({ description: 'Pages read by OCR (no text layer), with Tesseract’s mean word confidence' }),
});

export const webDocument = documentWithStatus.extend(webDocumentFields.shape).meta({
  id: 'WebDocument',
  description: "A document with the status of its newest ingestion, and the web app's fields.",
});
export const webDocumentResponse = z.object({ document: webDocument });
export const webDocumentListResponse = z.object({ documents: z.array(webDocument) });

export const webKnowledgeBase = knowledgeBase
  .extend({ pending })
  .meta({ id: 'WebKnowledgeBase', description: 'A KB the user reaches, with their role.' });
export const webKnowledgeBaseListItem = knowledgeBaseListItem
  .extend({ pending })
  .meta({ id: 'WebKnowledgeBaseListItem', description: "A KB in the web app's list, with its document count." });

export const webCitation = citation
  .extend({
    page_start: z.number().int().min(1).nullable().meta({
      description:
        "Pages the passage comes from (1-based, inclusive): a PDF's or a scan's; a deck's slide (see `location`); null for text",
    }),
    page_end: z.number().int().min(1).nullable(),
    location: z.string().nullable().meta({
      description:
        'Where a person looks, beside the pages: "slide 3" for a deck, the section heading path for other files and markdown ("Sheet rows, rows 2–21"); null when the pages say it',
    }),
    scanned: z.boolean().meta({ description: 'The page was read by OCR (a scan without a text layer)' }),
  })
  .meta({ id: 'WebCitation', description: 'A passage behind the answer, with the pages it cites.' });
export const webQueryResponse = queryResponse
  .extend({ citations: z.array(webCitation) })
  .meta({ id: 'WebQueryResponse', description: 'A cited answer, its citations with their pages.' });
