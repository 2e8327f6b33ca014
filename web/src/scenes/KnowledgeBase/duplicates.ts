// The same file chosen again: a document of the knowledge base has its name and the same content (SHA-256 of the
// bytes). Only files whose name is already listed are compared, so the usual upload reads nothing more; for those,
// the stored text (or the stored PDF) is fetched once and hashed in the browser.
import { api } from '../../api/client.ts';
import type { KbDocument } from '../../api/generated.ts';
import { isFileKind } from '../../lib/fileKinds.ts';

export interface Duplicate {
  file: File;
  /** The document that already holds this file. */
  document: KbDocument;
}

async function sha256(bytes: BufferSource): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

async function storedHash(document: KbDocument): Promise<string | null> {
  if (isFileKind(document.kind)) return sha256(await api.getDocumentFile(document.id));
  const { content } = await api.getDocumentContent(document.id);
  return content === null ? null : sha256(new TextEncoder().encode(content));
}

/** Splits chosen files into those to send and those the knowledge base already holds, name and content alike. */
export async function findDuplicates(
  files: File[],
  documents: KbDocument[],
): Promise<{ fresh: File[]; duplicates: Duplicate[] }> {
  const fresh: File[] = [];
  const duplicates: Duplicate[] = [];
  for (const file of files) {
    const document = documents.find((listed) => listed.filename === file.name);
    let same = false;
    if (document) {
      try {
        // Text is sent as file.text() (UTF-8), and stored as sent: hashed the same way on both sides.
        const bytes = isFileKind(document.kind)
          ? await file.arrayBuffer()
          : new TextEncoder().encode(await file.text());
        same = (await sha256(bytes)) === (await storedHash(document));
      } catch {
        // Could not compare (the document went away, the network failed): upload as asked.
        same = false;
      }
    }
    if (same && document) duplicates.push({ file, document });
    else fresh.push(file);
  }
  return { fresh, duplicates };
}
