// A pino logger writing into memory, for tests that read what the app logs (and assert what it never logs).
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

export function capturingLogger(level: 'debug' | 'info' = 'info'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}
