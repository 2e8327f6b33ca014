// `node bench/questionEmbeddingCost.ts DATASET [--questions 150] [--rounds 3] [--out FILE]`: what embedding one
// question costs the model worker, in CPU milliseconds, for the ways a bge question vector can be made: today's
// unit mean of the instructed and the bare question in two unpadded calls (rag embedQuestion), the same two as one
// padded call, and either text alone. The embedder runs in this process on one ONNX thread (as a model worker does),
// so process CPU time is the inference's. Rounds are interleaved (each round every variant once): the machine's
// other load falls on all of them alike. Each variant's vector is compared with today's (least cosine over the
// questions). Quality is not measured here: the bare and instructed questions alone are in
// docs/search-engineering.md (the question vector); one padded call would need a SciFact dev run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../service/config.ts';
import { loadBeirDataset } from '../service/eval/beir.ts';
import { BGE_QUERY_INSTRUCTION, BgeOnnxEmbeddings, normalizedMean } from '../service/rag/bgeEmbeddings.ts';
import { round } from './stats.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    questions: { type: 'string', default: '150' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string' },
  },
});
if (positionals.length !== 1) {
  process.stderr.write(
    'usage: node bench/questionEmbeddingCost.ts DATASET [--questions 150] [--rounds 3] [--out FILE]\n',
  );
  process.exit(2);
}
const config = loadConfig();
const dataset = await loadBeirDataset(positionals[0], 'test');
const questions = [...dataset.queries.values()].slice(0, Number(values.questions));
const rounds = Number(values.rounds);
const embedder = await BgeOnnxEmbeddings.load({ modelDir: config.embedder.modelDir, threads: 1 });
const paddedPair = embedder.withBatchMode('padded', 2);

const variants: Record<string, (question: string) => Promise<number[]>> = {
  'instructed + bare, two calls (today)': (question) => embedder.embedQuery(question),
  'instructed + bare, one padded call': async (question) => {
    const [instructed, bare] = await paddedPair.embedDocuments([BGE_QUERY_INSTRUCTION + question, question]);
    return normalizedMean(instructed, bare);
  },
  'bare question alone': async (question) => (await embedder.embedDocuments([question]))[0],
  'instructed question alone': async (question) =>
    (await embedder.embedDocuments([BGE_QUERY_INSTRUCTION + question]))[0],
};

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const cpuPerQuestion: Record<string, number[]> = {};
for (const embed of Object.values(variants)) await embed('warm up'); // first inferences of a length are slower
for (let r = 0; r < rounds; r += 1) {
  for (const [name, embed] of Object.entries(variants)) {
    const before = cpuMs();
    for (const question of questions) await embed(question);
    (cpuPerQuestion[name] ??= []).push((cpuMs() - before) / questions.length);
  }
}
const today = await Promise.all(questions.map((question) => embedder.embedQuery(question)));
const leastCosine: Record<string, number> = {};
for (const [name, embed] of Object.entries(variants)) {
  let least = 1;
  for (const [index, question] of questions.entries()) {
    const vector = await embed(question);
    least = Math.min(
      least,
      vector.reduce((sum, value, k) => sum + value * today[index][k], 0),
    );
  }
  leastCosine[name] = round(least, 4);
}

const result = {
  dataset: positionals[0],
  questions: questions.length,
  rounds,
  cpu_ms_per_question: Object.fromEntries(
    Object.entries(cpuPerQuestion).map(([name, perRound]) => [
      name,
      round(perRound.reduce((a, b) => a + b) / rounds, 2),
    ]),
  ),
  per_round: cpuPerQuestion,
  least_cosine_to_today: leastCosine,
  finished_at: new Date().toISOString(),
};
const lines = [
  `# Question embedding cost — ${result.questions} SciFact questions, ${rounds} interleaved rounds, one ONNX thread`,
  '',
  '| question vector | CPU ms per question | ÷ today | least cosine to today |',
  '|---|---:|---:|---:|',
  ...Object.keys(variants).map((name) => {
    const ms = result.cpu_ms_per_question[name];
    const base = result.cpu_ms_per_question['instructed + bare, two calls (today)'];
    return `| ${name} | ${ms.toFixed(2)} | ${(ms / base).toFixed(2)} | ${leastCosine[name].toFixed(4)} |`;
  }),
  '',
];
process.stdout.write(lines.join('\n'));
if (values.out) {
  mkdirSync(dirname(values.out), { recursive: true });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${values.out.slice(0, -'.json'.length)}.md`, lines.join('\n'));
}
await embedder.dispose();
