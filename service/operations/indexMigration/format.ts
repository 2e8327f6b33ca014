// `kbqa index status` as lines a person reads.
import type { Drift } from '../../search/index.ts';
import type { IndexStatus } from './status.ts';

function bytes(count: number): string {
  if (count < 1024) return `${count} B`;
  if (count < 1024 ** 2) return `${(count / 1024).toFixed(1)} KiB`;
  if (count < 1024 ** 3) return `${(count / 1024 ** 2).toFixed(1)} MiB`;
  return `${(count / 1024 ** 3).toFixed(2)} GiB`;
}

export function formatIndexStatus(status: IndexStatus): string {
  const lines = [
    `alias ${status.alias} → ${status.live ?? '(none: the API creates the index when it starts)'}`,
    `current template: ${status.template.file} (v${status.template.version}) in ${status.assets_dir}; configured embedder ${status.configured_embedder.modelName} (${status.configured_embedder.dimensions})`,
    '',
    'indices of this alias:',
  ];
  for (const entry of status.indices) {
    lines.push(
      `  ${entry.live ? '*' : ' '} ${entry.index}  v${entry.template_version ?? '?'}  ${entry.embedder ?? '?'}  ` +
        `${entry.documents} documents, ${entry.chunks} chunks, ${entry.segments} segments, ${bytes(entry.store_bytes)}  ${entry.health}  ${entry.migration_state ?? ''}`.trimEnd(),
    );
  }
  if (status.indices.length === 0) lines.push('  (none)');
  lines.push(
    '',
    `pipelines in force: ingest ${status.pipelines.ingest ?? '(none)'}; search ${status.pipelines.search.join(', ')}`,
    '',
  );
  if (status.drift.length === 0) {
    lines.push('no drift: the cluster runs what the files say');
  } else {
    lines.push('drift:');
    const byAsset = new Map<string, Drift[]>();
    for (const entry of status.drift) byAsset.set(entry.asset, [...(byAsset.get(entry.asset) ?? []), entry]);
    for (const [asset, entries] of byAsset) {
      lines.push(`  ${asset}:`);
      for (const entry of entries) lines.push(`    ${entry.kind}: ${entry.detail}`);
    }
    lines.push(
      '',
      status.live === status.target
        ? `to resolve: ${status.command}`
        : `to resolve: ${status.command} (builds ${status.target} beside ${status.live ?? 'the live index'}, fills it, swaps the alias once it is full)`,
    );
  }
  return lines.join('\n');
}
