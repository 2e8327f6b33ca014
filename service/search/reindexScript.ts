// The script a migration's `_reindex` converts chunks with, between two indices of a family that store something
// differently: the metadata's layout (v1 ↔ v2 on) and the sentence vectors' form (v1–v2 float32 ↔ v3 on int8).
import { metadataCopyScript } from './metadataLayouts.ts';
import { sentenceCopyScript } from './sentenceVectors.ts';

/**
 * The `_reindex` script from source to target: the metadata's layout (metadataLayouts.ts) and the sentence vectors'
 * form (sentenceVectors.ts), each when they differ; null when nothing does. Painless wants its functions first: the
 * metadata part (which declares some) leads.
 */
export function reindexScript(
  source: string,
  target: string,
): { lang: 'painless'; source: string; params: Record<string, unknown> } | null {
  const metadata = metadataCopyScript(source, target);
  const sentences = sentenceCopyScript(source, target);
  if (!metadata && !sentences) return null;
  return {
    lang: 'painless',
    source: `${metadata?.source ?? ''}\n${sentences ?? ''}`,
    params: { ...(metadata?.params ?? {}) },
  };
}
