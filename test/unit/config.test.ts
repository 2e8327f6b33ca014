// The environment → typed configuration (service/config.ts): defaults that run locally, each rule a ConfigError
// naming its variable, and the values derived from others (cluster URLs, shards, the default model, cookies).
import test from 'ava';
import { EXTRACTIVE_MODEL, loadConfig } from '../../service/config.ts';
import { ConfigError } from '../../service/errors.ts';

test('the defaults run against the local stack', (t) => {
  const config = loadConfig({});
  t.is(config.port, 8080);
  t.is(config.mongodb.url, 'mongodb://127.0.0.1:27017/kbqa');
  t.deepEqual(config.opensearch.urls, ['http://127.0.0.1:9200']);
  t.like(config.opensearch, { nodes: 1, shards: 1, replicas: 0, auth: null });
  t.is(config.answerModels.defaultModel, EXTRACTIVE_MODEL);
  t.deepEqual(config.answerModels.available, [EXTRACTIVE_MODEL]);
});

test('an empty variable means not set', (t) => {
  t.is(loadConfig({ KBQA_PORT: '', KBQA_MONGODB_URL: '' }).port, 8080);
  t.is(loadConfig({ KBQA_MONGODB_URL: '' }).mongodb.url, 'mongodb://127.0.0.1:27017/kbqa');
});

test('a malformed value is a ConfigError naming the variable', (t) => {
  const error = t.throws(() => loadConfig({ KBQA_PORT: 'eighty' }), { instanceOf: ConfigError });
  t.regex(error?.message ?? '', /^invalid configuration: KBQA_PORT/);
  t.throws(() => loadConfig({ KBQA_PORT: '70000' }), { message: /KBQA_PORT/ });
  t.throws(() => loadConfig({ KBQA_LOG_LEVEL: 'loud' }), { message: /KBQA_LOG_LEVEL/ });
  t.throws(() => loadConfig({ KBQA_OPENSEARCH_URL: 'not a url' }), { message: /KBQA_OPENSEARCH_URL/ });
});

test('several problems are reported together', (t) => {
  const error = t.throws(() => loadConfig({ KBQA_PORT: 'x', KBQA_LOG_LEVEL: 'loud' }));
  t.regex(error?.message ?? '', /KBQA_PORT.*KBQA_LOG_LEVEL|KBQA_LOG_LEVEL.*KBQA_PORT/);
});

test('a local cluster of N nodes: one URL becomes N consecutive ports, with 3 shards and a replica', (t) => {
  const config = loadConfig({ KBQA_OPENSEARCH_URL: 'http://127.0.0.1:9200/', KBQA_OPENSEARCH_NODES: '3' });
  t.deepEqual(config.opensearch.urls, ['http://127.0.0.1:9200', 'http://127.0.0.1:9201', 'http://127.0.0.1:9202']);
  t.like(config.opensearch, { url: 'http://127.0.0.1:9200', shards: 3, replicas: 1 });
  t.like(loadConfig({ KBQA_OPENSEARCH_NODES: '3', KBQA_CHUNKS_SHARDS: '2', KBQA_CHUNKS_REPLICAS: '0' }).opensearch, {
    shards: 2,
    replicas: 0,
  });
});

test('listed OpenSearch URLs are kept as listed, without trailing slashes', (t) => {
  const config = loadConfig({ KBQA_OPENSEARCH_URL: 'http://a:9200/,http://b:9200//', KBQA_OPENSEARCH_NODES: '2' });
  t.deepEqual(config.opensearch.urls, ['http://a:9200', 'http://b:9200']);
});

test('OpenSearch credentials: both or neither', (t) => {
  t.deepEqual(loadConfig({ KBQA_OPENSEARCH_USERNAME: 'admin', KBQA_OPENSEARCH_PASSWORD: 'secret' }).opensearch.auth, {
    username: 'admin',
    password: 'secret',
  });
  t.throws(() => loadConfig({ KBQA_OPENSEARCH_USERNAME: 'admin' }), {
    message: /set both KBQA_OPENSEARCH_USERNAME and KBQA_OPENSEARCH_PASSWORD/,
  });
  t.throws(() => loadConfig({ KBQA_OPENSEARCH_PASSWORD: 'secret' }), { message: /set both/ });
});

test('chunk overlap must be smaller than the chunk', (t) => {
  t.throws(() => loadConfig({ KBQA_CHUNK_TOKENS: '128', KBQA_CHUNK_OVERLAP_TOKENS: '128' }), {
    message: /KBQA_CHUNK_OVERLAP_TOKENS must be smaller than KBQA_CHUNK_TOKENS/,
  });
  t.like(loadConfig({ KBQA_CHUNK_TOKENS: '128', KBQA_CHUNK_OVERLAP_TOKENS: '16' }).chunking, {
    chunkTokens: 128,
    overlapTokens: 16,
  });
});

test('sentence vectors off: the sentence weight is 0, and setting one above 0 is refused', (t) => {
  t.is(loadConfig({ KBQA_SENTENCE_VECTORS: 'off' }).opensearch.sentenceWeight, 0);
  t.is(loadConfig({ KBQA_SENTENCE_VECTORS: 'off' }).chunking.sentenceVectors, false);
  t.throws(() => loadConfig({ KBQA_SENTENCE_VECTORS: 'off', KBQA_SENTENCE_WEIGHT: '0.5' }), {
    message: /KBQA_SENTENCE_VECTORS=off/,
  });
  t.notThrows(() => loadConfig({ KBQA_SENTENCE_VECTORS: 'off', KBQA_SENTENCE_WEIGHT: '0' }));
});

test('answer models: an OpenAI-compatible endpoint makes its first model the default, beside the extractive one', (t) => {
  const config = loadConfig({ KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', KBQA_OPENAI_MODELS: 'small,large' });
  t.is(config.answerModels.defaultModel, 'small');
  t.deepEqual(config.answerModels.available, ['small', 'large', EXTRACTIVE_MODEL]);
  t.is(config.answerModels.openai?.apiKey, 'not-needed');
  t.is(loadConfig({ KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).answerModels.defaultModel, 'gpt-4o-mini');
});

test('answer models: KBQA_DEFAULT_MODEL must be one that is available', (t) => {
  t.is(
    loadConfig({ KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', KBQA_DEFAULT_MODEL: EXTRACTIVE_MODEL }).answerModels
      .defaultModel,
    EXTRACTIVE_MODEL,
  );
  t.throws(() => loadConfig({ KBQA_DEFAULT_MODEL: 'gpt-4o' }), {
    message: (text: string) => text.includes(`KBQA_DEFAULT_MODEL must be one of ${EXTRACTIVE_MODEL}`),
  });
});

test('the OpenAI embedder needs an endpoint; without one the local embedder is used', (t) => {
  t.throws(() => loadConfig({ KBQA_EMBEDDER: 'openai' }), {
    message: /KBQA_EMBEDDER=openai needs KBQA_OPENAI_BASE_URL/,
  });
  t.is(loadConfig({}).embedder.openai, null);
  t.is(
    loadConfig({ KBQA_EMBEDDER: 'openai', KBQA_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).embedder.openai?.model,
    'text-embedding-3-small',
  );
});

test('the public URL: default from host and port, trailing slashes dropped, https turns on secure cookies', (t) => {
  t.like(loadConfig({ KBQA_HOST: '0.0.0.0', KBQA_PORT: '3000' }).web, {
    publicUrl: 'http://0.0.0.0:3000',
    secureCookies: false,
  });
  t.like(loadConfig({ KBQA_PUBLIC_URL: 'https://kb.example.com//' }).web, {
    publicUrl: 'https://kb.example.com',
    secureCookies: true,
  });
});

test('metrics can be turned off; durations are converted to milliseconds', (t) => {
  t.is(loadConfig({ KBQA_METRICS_PORT: 'off' }).metrics, null);
  t.like(loadConfig({ KBQA_METRICS_PORT: '9999' }).metrics, { port: 9999 });
  const config = loadConfig({
    KBQA_SESSION_IDLE_MINUTES: '30',
    KBQA_SESSION_MAX_HOURS: '2',
    KBQA_DELETED_RETENTION_DAYS: '3',
  });
  t.is(config.web.sessionIdleMs, 30 * 60_000);
  t.is(config.web.sessionMaxMs, 2 * 3_600_000);
  t.is(config.deletedRetentionMs, 3 * 86_400_000);
});
