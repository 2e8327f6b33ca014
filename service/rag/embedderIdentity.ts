// Which vectors the service makes, without loading the model: the main thread names the chunk index after it, and
// importing bgeEmbeddings.ts there would load ONNX Runtime into a thread that never runs an inference.
export const BGE_SMALL_EN = { modelName: 'bge-small-en-v1.5', dimensions: 384 } as const;
