// What the numbers were measured on.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { MongoClient } from 'mongodb';
import type { SearchIndex } from '../service/search/index.ts';

export interface MachineInfo {
  cpu_model: string;
  cores: number;
  memory_gib: number;
  os: string;
  node: string;
  opensearch: string;
  lucene: string;
  ferretdb: string;
  mongodb_wire_version: string;
  load_average_at_start: number[];
  chunks_in_shared_index_at_start: number;
  /** The alias the bench and its API wrote and read, and the index behind it (its name says the template version). */
  chunk_alias?: string;
  chunk_index?: string;
}

function osName(): string {
  try {
    const release = readFileSync('/etc/os-release', 'utf8');
    return /^PRETTY_NAME="?([^"\n]+)"?/m.exec(release)?.[1] ?? `${os.type()} ${os.release()}`;
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}

export async function describeMachine(search: SearchIndex, mongoUrl: string, timeoutMs: number): Promise<MachineInfo> {
  const root = await search.request<{ version: { number: string; lucene_version: string; distribution?: string } }>(
    'GET',
    '/',
  );
  const mongo = new MongoClient(mongoUrl, { serverSelectionTimeoutMS: timeoutMs });
  let buildInfo: { version?: string; ferretdbVersion?: string } = {};
  try {
    await mongo.connect();
    buildInfo = (await mongo.db().command({ buildInfo: 1 })) as typeof buildInfo;
  } finally {
    await mongo.close();
  }
  return {
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memory_gib: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    os: osName(),
    node: process.version,
    opensearch: `${root.version.distribution ?? 'opensearch'} ${root.version.number}`,
    lucene: root.version.lucene_version,
    ferretdb: buildInfo.ferretdbVersion ?? 'not FerretDB',
    mongodb_wire_version: buildInfo.version ?? 'unknown',
    load_average_at_start: os.loadavg().map((value) => Math.round(value * 100) / 100),
    chunks_in_shared_index_at_start: await search.countChunks(),
    chunk_alias: search.alias,
    chunk_index: (await search.servingIndex()).index,
  };
}
