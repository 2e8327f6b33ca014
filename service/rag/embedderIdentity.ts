// Which vectors the service makes, without loading the model: the main thread names the chunk index after it, and
// importing bgeEmbeddings.ts there would load ONNX Runtime into a thread that never runs an inference.

/** An embedder as the chunk index knows it: its name (part of the index's name) and its vectors' length. */
export interface EmbedderIdentity {
  modelName: string;
  dimensions: number;
}

export const BGE_SMALL_EN = { modelName: 'bge-small-en-v1.5', dimensions: 384 } as const;

/**
 * The OpenAI-compatible embedder's name: `openai-<model>`, lower-case, every run of characters an index name cannot
 * hold as one dash; shortened vectors (`dimensions` asked for) are another vector space, so the size is part of the
 * name (`openai-text-embedding-3-small-256`) and a shortened embedder gets an index of its own.
 */
export function openaiEmbedderName(model: string, dimensions: number | null): string {
  const words = model
    .toLowerCase()
    .split(/[^a-z0-9.]+/)
    .filter((word) => word.length > 0);
  return ['openai', ...words, ...(dimensions === null ? [] : [String(dimensions)])].join('-');
}
