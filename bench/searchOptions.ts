// How bench scripts open the chunk index: the service's own options, with a timeout for bulk loads and big deletes.
// Apart from bench/setUp.ts because setUp reads `npm run bench`'s command line, which other scripts do not share.
import type { Config } from '../service/config.ts';
import type { SearchIndexOptions } from '../service/search/index.ts';

export function benchSearchOptions(config: Config, alias: string): SearchIndexOptions {
  return {
    url: config.opensearch.url,
    alias,
    // Bulk loads of 500 vectors and a delete of 100k chunks take longer than a request of the service does.
    timeoutMs: 300_000,
    embedderName: 'bge-small-en-v1.5',
    dimensions: 384,
    shards: config.opensearch.shards,
    replicas: config.opensearch.replicas,
    rrfRankConstant: config.opensearch.rrfRankConstant,
    rrfWeights: config.opensearch.rrfWeights,
    // The refresh-policy comparison's group commit runs the service's refresher with the service's interval.
    refreshIntervalMs: config.ingestion.refreshIntervalMs,
  };
}
