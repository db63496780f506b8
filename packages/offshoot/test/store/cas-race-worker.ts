// One contender in the conformance suite's multi-process CAS race; run as `node --import tsx cas-race-worker.ts`.
// It rebuilds the backend the suite names in OFFSHOOT_RACE_BACKEND (`local:<dir>` or `s3:<bucket>[/<prefix>]`),
// prints "ready", waits for "go" on stdin, then performs OFFSHOOT_RACE_ROUNDS successful compare-and-swap
// increments of the counter at OFFSHOOT_RACE_KEY and writes every value it won, one per line, to
// OFFSHOOT_RACE_OUT. Its last stdout line is a JSON summary.
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { hasCode } from '../../src/core/errors.js';
import type { Backend } from '../../src/store/backend.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';

const MAX_ATTEMPTS_PER_ROUND = 100_000;

function required(name: string): string {
  const v = process.env[name];
  if (v === undefined || v === '') throw new Error(`cas-race-worker: ${name} is not set`);
  return v;
}

async function openRaceBackend(spec: string): Promise<Backend> {
  if (spec.startsWith('local:')) return new LocalBackend(spec.slice('local:'.length));
  if (spec.startsWith('s3:')) {
    const rest = spec.slice('s3:'.length);
    const slash = rest.indexOf('/');
    const bucket = slash < 0 ? rest : rest.slice(0, slash);
    const prefix = slash < 0 ? '' : rest.slice(slash + 1);
    const { openS3Backend, s3ConfigFromEnv } = await import('../../src/store/s3/s3-backend.js');
    // Each worker probes before it reports ready (on its own key, outside the race): the probe finds the
    // If-Match form this endpoint enforces, which the race depends on.
    return openS3Backend({ ...s3ConfigFromEnv(), bucket, prefix });
  }
  throw new Error(`cas-race-worker: unknown OFFSHOOT_RACE_BACKEND ${JSON.stringify(spec)}`);
}

async function waitForGo(): Promise<void> {
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === 'go') break;
  }
  lines.close();
}

async function main(): Promise<void> {
  const backend = await openRaceBackend(required('OFFSHOOT_RACE_BACKEND'));
  const key = required('OFFSHOOT_RACE_KEY');
  const rounds = Number(required('OFFSHOOT_RACE_ROUNDS'));
  const me = required('OFFSHOOT_RACE_ID');
  const won: number[] = [];
  let conflicts = 0;
  let retried = 0;

  process.stdout.write('ready\n');
  await waitForGo();

  const t0 = performance.now();
  for (let round = 0; round < rounds; round++) {
    for (let attempt = 0; ; attempt++) {
      if (attempt >= MAX_ATTEMPTS_PER_ROUND)
        throw new Error(`${me}: no win after ${attempt} attempts in round ${round}`);
      try {
        const { body, etag } = await backend.get(key);
        const next = (JSON.parse(body.toString('utf8')) as { n: number }).n + 1;
        await backend.put(key, Buffer.from(JSON.stringify({ n: next, by: me })), { ifMatch: etag });
        won.push(next);
        break;
      } catch (err) {
        // A lost CAS is the expected outcome for most attempts; BUSY locks and throttling say "try again".
        if (hasCode(err, 'CAS_CONFLICT')) conflicts++;
        else if ((err as { retryable?: unknown }).retryable === true) retried++;
        else throw err;
      }
    }
  }

  await writeFile(required('OFFSHOOT_RACE_OUT'), won.map((n) => `${n}\n`).join(''));
  await backend.close();
  process.stdout.write(
    `${JSON.stringify({ id: me, ms: Math.round(performance.now() - t0), won: won.length, conflicts, retried })}\n`,
  );
}

main().catch((err: unknown) => {
  const e = err as { code?: string; message?: string };
  process.stderr.write(`cas-race-worker: ${e.code ?? 'ERROR'}: ${e.message ?? String(err)}\n`);
  process.exit(1);
});
