// PDF uploads through /api/web as the web app sends them, and waiting for the document to settle.
import type { WebClient } from './webClient.ts';

/** What the web app sends: multipart with the file in the field "file", the session cookie and its CSRF token. */
export async function upload(
  browser: WebClient,
  kbId: string,
  filename: string,
  bytes: Uint8Array,
  baseUrl = browser.baseUrl,
) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from(bytes)], { type: 'application/pdf' }), filename);
  const response = await fetch(`${baseUrl}/api/web/knowledge-bases/${kbId}/uploads`, {
    method: 'POST',
    headers: { cookie: browser.cookie ?? '', 'x-csrf-token': browser.csrfToken ?? '' },
    body: form,
  });
  return { status: response.status, body: await response.json() };
}

/** The document once it is ready or failed (polled every 100 ms, for up to 150 s). */
export async function settled(browser: WebClient, documentId: string) {
  let last: unknown = null;
  // Up to 150 s: past the 120 s extraction time limit, so even a stuck extraction ends as a (reported) failure.
  for (let attempt = 0; attempt < 1_500; attempt += 1) {
    const { body } = await browser.call('GET', `/api/web/documents/${documentId}`);
    if (body.document.status === 'ready' || body.document.status === 'failed') return body.document;
    last = body.document;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`document ${documentId} did not settle in 150 s; last seen: ${JSON.stringify(last)}`);
}
