// Holds an ingestion right before it writes its chunks, until released: the moment a delete racing it does the most
// harm (the document is recorded and embedded; nothing of it is indexed yet).
import type { SearchIndex } from '../../service/search/index.ts';

export function holdChunkIndexing(search: SearchIndex) {
  const original = search.indexChunks;
  let reached!: () => void;
  const atIndexing = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  search.indexChunks = async (chunks) => {
    reached();
    await released;
    return original(chunks);
  };
  return {
    /** Resolves once an ingestion is held. */
    atIndexing,
    /** Lets it (and any held after it) go on. */
    release,
    /** Puts indexChunks back and releases whatever is held. */
    restore: () => {
      search.indexChunks = original;
      release();
    },
  };
}
