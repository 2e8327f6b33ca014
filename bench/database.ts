// The bench's own MongoDB database, on the server the configuration names. FerretDB's SQLite backend scans a
// table even for an _id lookup, and the shared `kbqa` database holds every test run's users, KBs and documents, so
// a bench against it would time those scans. A fresh database per run also keeps the bench's API from claiming
// ingestion jobs that another process (a test run) queued in the shared one.
import { MongoClient } from 'mongodb';

/** `kbqa_bench_<stamp>` with only letters, digits and underscores (what every server accepts in a database name). */
export function benchDatabaseName(stamp: string): string {
  let compact = '';
  for (const character of stamp) {
    if (
      (character >= '0' && character <= '9') ||
      (character >= 'A' && character <= 'Z') ||
      (character >= 'a' && character <= 'z')
    )
      compact += character;
  }
  return `kbqa_bench_${compact}`;
}

/**
 * The configured URL with another database: same hosts, credentials and options. With credentials and no
 * authSource, the driver authenticates against the URL's database, so the original one (or admin) is kept as
 * authSource: the user exists there, not in a database created a moment ago.
 */
export function withDatabase(url: string, database: string): string {
  const schemeEnd = url.indexOf('://');
  if (schemeEnd < 0) throw new Error(`not a MongoDB URL: ${url}`);
  const hostsStart = schemeEnd + 3;
  const queryStart = url.indexOf('?', hostsStart);
  const pathEnd = queryStart < 0 ? url.length : queryStart;
  const slash = url.indexOf('/', hostsStart);
  const hostsEnd = slash >= 0 && slash < pathEnd ? slash : pathEnd;
  const hosts = url.slice(hostsStart, hostsEnd);
  const originalDatabase = hostsEnd < pathEnd ? url.slice(hostsEnd + 1, pathEnd) : '';
  const query = queryStart < 0 ? '' : url.slice(queryStart + 1);
  let options = query;
  if (hosts.includes('@') && !new URLSearchParams(query).has('authSource')) {
    options = `${query ? `${query}&` : ''}authSource=${encodeURIComponent(originalDatabase || 'admin')}`;
  }
  return `${url.slice(0, hostsEnd)}/${database}${options ? `?${options}` : ''}`;
}

/** Drops the bench's database (every collection the run created in it). */
export async function dropDatabase(url: string, timeoutMs: number): Promise<void> {
  const client = new MongoClient(url, { serverSelectionTimeoutMS: timeoutMs, retryWrites: false });
  try {
    await client.connect();
    await client.db().dropDatabase();
  } finally {
    await client.close();
  }
}
