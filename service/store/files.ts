// Original uploaded files (PDFs), in GridFS (bucket `document_files`): kept so they can be downloaded, opened at a
// page, and extracted again (`kbqa docs reindex`). A file's id is a UUID string; its metadata names its document
// and KB, so deleting either deletes the file.
import { randomUUID } from 'node:crypto';
import type { Readable, Writable } from 'node:stream';
import { GridFSBucket, type Db } from 'mongodb';
import { storeCall } from './mongo.ts';

export interface StoredFileMetadata {
  document_id: string;
  knowledge_base_id: string;
  content_type: string;
}

export interface StoredFile {
  id: string;
  filename: string;
  length: number;
  metadata: StoredFileMetadata;
}

export function filesStore(db: Db) {
  const bucket = new GridFSBucket(db, { bucketName: 'document_files' });
  const files = db.collection<{ _id: string; filename: string; length: number; metadata: StoredFileMetadata }>(
    'document_files.files',
  );
  const chunks = db.collection<{ files_id: string }>('document_files.chunks');

  async function deleteWhere(filter: Record<string, unknown>): Promise<number> {
    const found = await storeCall(() => files.find(filter, { projection: { _id: 1 } }).toArray());
    for (const file of found) {
      try {
        await storeCall(() => bucket.delete(file._id as never));
      } catch (error) {
        // Deleted meanwhile by another request: what we wanted.
        if (!(error instanceof Error && /not found|FileNotFound/i.test(error.message))) throw error;
      }
    }
    return found.length;
  }

  return {
    /** A writable stream into a new file; the file exists once the stream finishes. Abort it with `abortFileUpload`. */
    openFileUpload(
      filename: string,
      metadata: StoredFileMetadata,
    ): { id: string; stream: Writable & { abort(): Promise<void> } } {
      const id = randomUUID();
      const stream = bucket.openUploadStreamWithId(id as never, filename, { metadata });
      return { id, stream };
    },
    openFileDownload(id: string): Readable {
      return bucket.openDownloadStream(id as never);
    },
    findFile: async (id: string): Promise<StoredFile | null> => {
      const file = await storeCall(() => files.findOne({ _id: id }));
      return file ? { id: file._id, filename: file.filename, length: file.length, metadata: file.metadata } : null;
    },
    /** The whole file in memory: for extraction, which needs all of it (bounded by KBQA_MAX_UPLOAD_BYTES). */
    async readFile(id: string): Promise<Uint8Array | null> {
      if (!(await storeCall(() => files.findOne({ _id: id }, { projection: { _id: 1 } })))) return null;
      const parts: Buffer[] = [];
      await storeCall(
        () =>
          new Promise<void>((resolve, reject) => {
            bucket
              .openDownloadStream(id as never)
              .on('data', (part: Buffer) => parts.push(part))
              .on('error', reject)
              .on('end', () => resolve());
          }),
      );
      return Buffer.concat(parts);
    },
    deleteFile: (id: string) => deleteWhere({ _id: id }),
    /**
     * Every trace of a file being given up (an aborted or refused upload): its record and all its chunks — also a
     * chunk whose insert was still in flight when the upload was aborted, by a second sweep a moment later.
     */
    async discardFile(id: string): Promise<void> {
      await storeCall(() => files.deleteOne({ _id: id }));
      await storeCall(() => chunks.deleteMany({ files_id: id }));
      setTimeout(() => void chunks.deleteMany({ files_id: id }).catch(() => undefined), 1_000).unref();
    },
    deleteFilesOfDocument: (documentId: string) => deleteWhere({ 'metadata.document_id': documentId }),
    deleteFilesOfKnowledgeBase: (knowledgeBaseId: string) =>
      deleteWhere({ 'metadata.knowledge_base_id': knowledgeBaseId }),
  };
}
