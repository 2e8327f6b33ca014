// An OpenAPI 3.1 description of /api/web, the web app's API, built as /api/v1's is (document.ts) from the zod
// schemas the routes validate with and the presenters are typed against. It is not published: its one reader is
// clients/web/generate.ts, which turns it into the web app's types (web/src/api/generated.ts), so the app cannot
// drift from what the server sends. Each operation names its request body and its success answers; failures are
// the one error envelope, as on /api/v1.
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import { loadConfig } from '../../config.ts';
import {
  conversationDeletedResponse,
  conversationListResponse,
  conversationResponse,
  conversationTurnBody,
  createConversationBody,
  feedbackBody,
  feedbackResponse,
  renameConversationBody,
} from '../routes/conversations.schema.ts';
import {
  documentDeletedResponse,
  ingestDocumentBody,
  ingestedDocumentResponse,
  replaceDocumentBody,
} from '../routes/documents.schema.ts';
import { leftResponse, membershipResponse } from '../routes/knowledgeBaseMembership.schema.ts';
import {
  createKnowledgeBaseBody,
  knowledgeBaseCreatedResponse,
  knowledgeBaseDeletedResponse,
  knowledgeBaseResponse,
} from '../routes/knowledgeBases.schema.ts';
import { modelsResponse } from '../routes/models.schema.ts';
import { queryBody } from '../routes/query.schema.ts';
import {
  adminUsersResponse,
  apiKeyListResponse,
  apiKeyRevokedResponse,
  createdApiKeyResponse,
  deletedKnowledgeBaseListResponse,
  documentContent,
  invitationResponse,
  limits,
  organisationSharedResponse,
  passwordChangedResponse,
  passwordLinkInfo,
  passwordResetResponse,
  sessionResponse,
  setupStatus,
  blockedSenderResponse,
  blockedSendersResponse,
  invitationSentResponse,
  invitationWithdrawnResponse,
  receivedInvitationsResponse,
  sharing,
  signedOutEverywhereResponse,
  signedOutResponse,
  unblockedResponse,
  unsharedResponse,
  webDocumentListResponse,
  webDocumentResponse,
  webKnowledgeBase,
  webKnowledgeBaseListItem,
  webQueryResponse,
  accountDeletedResponse,
} from '../routes/webApp.schema.ts';
import {
  knowledgeBaseRatingsResponse,
  webConversationWithMessagesResponse,
  webTurnResponse,
} from '../routes/webConversations.schema.ts';
import {
  changePasswordBody,
  createApiKeyBody,
  credentialsBody,
  inviteBody,
  libraryFlagBody,
  passwordLinkBody,
  sharedFlagBody,
  shareWithUserBody,
  usePasswordLinkBody,
} from '../routes/webSession.schema.ts';
import { errorEnvelope, pathId } from './shared.ts';

const config = loadConfig({});
const ID = pathId("The resource's id");
const MESSAGE = ID.extend({ message_id: z.string() });

const content = (schema: z.ZodType) => ({ 'application/json': { schema } });

/** One operation: its id (the web client's call), a JSON body when it takes one, and its success answers. */
function operation(
  operationId: string,
  answers: Partial<Record<200 | 201 | 202, z.ZodType>>,
  options: { body?: z.ZodType; path?: z.ZodObject } = {},
): ZodOpenApiOperationObject {
  const succeeded = Object.fromEntries(
    Object.entries(answers).map(([status, schema]) => [status, { description: operationId, content: content(schema) }]),
  );
  return {
    operationId,
    ...(options.path ? { requestParams: { path: options.path } } : {}),
    ...(options.body ? { requestBody: { content: content(options.body) } } : {}),
    responses: {
      ...succeeded,
      default: { description: 'Every failure: the error envelope.', content: content(errorEnvelope) },
    },
  };
}

const PATHS: ZodOpenApiPathsObject = {
  // Setup, sign-in, session, account (routes/webSession.ts)
  '/api/web/setup': { get: operation('getSetup', { 200: setupStatus }) },
  '/api/web/setup/first-account': {
    post: operation('createFirstAccount', { 201: sessionResponse }, { body: credentialsBody }),
  },
  '/api/web/sign-up': { post: operation('signUp', { 201: sessionResponse }, { body: credentialsBody }) },
  '/api/web/session': {
    get: operation('getSession', { 200: sessionResponse }),
    post: operation('signIn', { 200: sessionResponse }, { body: credentialsBody }),
    delete: operation('signOut', { 200: signedOutResponse }),
  },
  '/api/web/sessions': { delete: operation('signOutEverywhere', { 200: signedOutEverywhereResponse }) },
  '/api/web/account/password': {
    put: operation('changePassword', { 200: passwordChangedResponse }, { body: changePasswordBody }),
  },
  '/api/web/password-links/inspect': {
    post: operation('inspectPasswordLink', { 200: passwordLinkInfo }, { body: passwordLinkBody }),
  },
  '/api/web/password-links/use': {
    post: operation('redeemPasswordLink', { 200: sessionResponse }, { body: usePasswordLinkBody }),
  },

  // Admin (routes/admin.ts)
  '/api/web/admin/users': { get: operation('listUsers', { 200: adminUsersResponse }) },
  '/api/web/admin/invitations': { post: operation('inviteUser', { 201: invitationResponse }, { body: inviteBody }) },
  '/api/web/admin/users/{id}/password-reset': {
    post: operation('createPasswordReset', { 201: passwordResetResponse }, { path: ID }),
  },
  '/api/web/admin/users/{id}': {
    delete: operation('deleteUser', { 200: accountDeletedResponse }, { path: ID }),
  },

  // Knowledge bases (routes/knowledgeBases.ts, knowledgeBaseMembership.ts, knowledgeBaseSharing.ts)
  '/api/web/knowledge-bases': {
    get: operation('listKnowledgeBases', { 200: z.object({ knowledge_bases: z.array(webKnowledgeBaseListItem) }) }),
    post: operation('createKnowledgeBase', { 201: knowledgeBaseCreatedResponse }, { body: createKnowledgeBaseBody }),
  },
  '/api/web/knowledge-bases/{id}': {
    get: operation('getKnowledgeBase', { 200: z.object({ knowledge_base: webKnowledgeBase }) }, { path: ID }),
    delete: operation('deleteKnowledgeBase', { 200: knowledgeBaseDeletedResponse }, { path: ID }),
  },
  '/api/web/knowledge-bases/{id}/membership': {
    get: operation('getMembership', { 200: membershipResponse }, { path: ID }),
    delete: operation('leaveKnowledgeBase', { 200: leftResponse }, { path: ID }),
  },
  '/api/web/knowledge-bases/{id}/membership/accept': {
    post: operation('acceptKnowledgeBase', { 200: membershipResponse }, { path: ID }),
  },
  '/api/web/knowledge-bases/{id}/library': {
    put: operation('setLibrary', { 200: knowledgeBaseResponse }, { path: ID, body: libraryFlagBody }),
  },
  '/api/web/knowledge-bases/{id}/sharing': { get: operation('getSharing', { 200: sharing }, { path: ID }) },
  '/api/web/knowledge-bases/{id}/sharing/users': {
    post: operation('shareWithUser', { 202: invitationSentResponse }, { path: ID, body: shareWithUserBody }),
  },
  '/api/web/knowledge-bases/{id}/sharing/invitations/{invitationId}': {
    delete: operation(
      'withdrawInvitation',
      { 200: invitationWithdrawnResponse },
      { path: ID.extend({ invitationId: z.string() }) },
    ),
  },
  '/api/web/knowledge-bases/{id}/sharing/users/{userId}': {
    delete: operation('unshareUser', { 200: unsharedResponse }, { path: ID.extend({ userId: z.string() }) }),
  },
  '/api/web/knowledge-bases/{id}/sharing/organisation': {
    put: operation('setOrganisationSharing', { 200: organisationSharedResponse }, { path: ID, body: sharedFlagBody }),
  },
  '/api/web/invitations': { get: operation('listInvitations', { 200: receivedInvitationsResponse }) },
  '/api/web/blocked-senders': { get: operation('listBlockedSenders', { 200: blockedSendersResponse }) },
  '/api/web/blocked-senders/{userId}': {
    put: operation('blockSender', { 200: blockedSenderResponse }, { path: z.object({ userId: z.string() }) }),
    delete: operation('unblockSender', { 200: unblockedResponse }, { path: z.object({ userId: z.string() }) }),
  },
  '/api/web/deleted-knowledge-bases': {
    get: operation('listDeletedKnowledgeBases', { 200: deletedKnowledgeBaseListResponse }),
  },
  '/api/web/deleted-knowledge-bases/{id}/restore': {
    post: operation('restoreKnowledgeBase', { 200: knowledgeBaseResponse }, { path: ID }),
  },

  // Documents (routes/documents.ts, uploads.ts, documentContent.ts); the list as the app asks it (?include=status)
  '/api/web/knowledge-bases/{id}/documents': {
    get: operation('listDocuments', { 200: webDocumentListResponse }, { path: ID }),
  },
  '/api/web/knowledge-bases/{id}/uploads': { post: operation('uploadPdf', { 202: webDocumentResponse }, { path: ID }) },
  '/api/web/limits': { get: operation('getLimits', { 200: limits }) },
  '/api/web/documents': {
    post: operation(
      'createDocument',
      { 201: ingestedDocumentResponse, 202: webDocumentResponse },
      { body: ingestDocumentBody(config.limits.maxContentBytes) },
    ),
  },
  '/api/web/documents/{id}': {
    get: operation('getDocument', { 200: webDocumentResponse }, { path: ID }),
    put: operation(
      'replaceDocument',
      { 201: ingestedDocumentResponse, 202: webDocumentResponse },
      { path: ID, body: replaceDocumentBody(config.limits.maxContentBytes) },
    ),
    delete: operation('deleteDocument', { 200: documentDeletedResponse }, { path: ID }),
  },
  '/api/web/documents/{id}/retry': {
    post: operation('retryDocument', { 201: ingestedDocumentResponse, 202: webDocumentResponse }, { path: ID }),
  },
  '/api/web/documents/{id}/content': { get: operation('getDocumentContent', { 200: documentContent }, { path: ID }) },

  // Ask (routes/query.ts, models.ts)
  '/api/web/query': {
    post: operation('ask', { 200: webQueryResponse }, { body: queryBody(config.answerModels.available) }),
  },
  '/api/web/models': { get: operation('listModels', { 200: modelsResponse }) },

  // Conversations (routes/conversations.ts; the turn also streams, as /query does) and the owner's view of a KB's
  // answer ratings (routes/knowledgeBaseRatings.ts)
  '/api/web/conversations': {
    get: operation('listConversations', { 200: conversationListResponse }),
    post: operation('createConversation', { 201: conversationResponse }, { body: createConversationBody }),
  },
  '/api/web/conversations/{id}': {
    get: operation('getConversation', { 200: webConversationWithMessagesResponse }, { path: ID }),
    patch: operation('renameConversation', { 200: conversationResponse }, { path: ID, body: renameConversationBody }),
    delete: operation('deleteConversation', { 200: conversationDeletedResponse }, { path: ID }),
  },
  '/api/web/conversations/{id}/messages': {
    post: operation(
      'askInConversation',
      { 200: webTurnResponse },
      { path: ID, body: conversationTurnBody(config.answerModels.available) },
    ),
  },
  '/api/web/conversations/{id}/messages/{message_id}/feedback': {
    put: operation('rateAnswer', { 200: feedbackResponse }, { path: MESSAGE, body: feedbackBody }),
    delete: operation('clearAnswerRating', { 200: conversationDeletedResponse }, { path: MESSAGE }),
  },
  '/api/web/knowledge-bases/{id}/ratings': {
    get: operation('getKnowledgeBaseRatings', { 200: knowledgeBaseRatingsResponse }, { path: ID }),
  },

  // API keys (routes/apiKeys.ts)
  '/api/web/api-keys': {
    get: operation('listApiKeys', { 200: apiKeyListResponse }),
    post: operation('createApiKey', { 201: createdApiKeyResponse }, { body: createApiKeyBody }),
  },
  '/api/web/api-keys/{id}': { delete: operation('revokeApiKey', { 200: apiKeyRevokedResponse }, { path: ID }) },
};

export function buildWebOpenApiDocument() {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'kbqa web app API (/api/web)',
      version: '1.0.0',
      description: "The web app's own API: a session cookie and a CSRF token, never an API key. Not a public contract.",
    },
    paths: PATHS,
  });
}
