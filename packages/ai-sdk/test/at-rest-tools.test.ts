// offshootTools at rest: every tool is one run of the real `offshoot` CLI with --json, no daemon, driven through the
// real AI SDK by its own offline test model, scripted. A wrapper around the binary records each command line.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isOffshootError, OffshootError } from '@offshoot/client';
import { offshootTools } from '../src/index.js';
import { answered, approvalOf, runSql, sql } from './host.js';
import { callOnce, run } from './scripted-model.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));

describe('offshootTools at rest', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-ai-'));
  const store = join(dir, 'store');
  const log = join(dir, 'argv.log');
  const wrapper = join(dir, 'offshoot');
  const human = (...args: string[]) => execFileSync(BIN, ['-store', store, ...args], { encoding: 'utf8' });
  const commands = () => readFileSync(log, 'utf8').trim().split('\n');
  const tools = () => offshootTools({ store, bin: wrapper });

  before(() => {
    // One line per run, however many lines its arguments hold (SQL may).
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf '%s' "$*" | tr '\\n' ' ' >> '${log}'\necho >> '${log}'\nexec '${BIN}' "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    writeFileSync(log, '');
    human('init');
    human('create', 'app');
    const main = human('checkout', 'app').trim();
    sql(main, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes VALUES (1, 'seed');");
    human('checkpoint', 'app', 'seeded');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the loop in one run, each tool one CLI command (arguments after --), each mutation marked as an agent', async () => {
    const r = await run({ ...tools(), run_sql: runSql }, [
      { calls: [{ tool: 'offshoot_fork', input: { database: 'app', new_branch: 'attempt-1', ttl: '2h' } }] },
      { calls: [{ tool: 'offshoot_checkout', input: { database: 'app', branch: 'attempt-1' } }] },
      (last) => ({
        calls: [
          {
            tool: 'run_sql',
            input: { path: (last as { path: string }).path, sql: "INSERT INTO notes VALUES (2, 'new')" },
          },
        ],
      }),
      { calls: [{ tool: 'offshoot_checkpoint', input: { database: 'app', branch: 'attempt-1', name: 'tests-pass' } }] },
      { calls: [{ tool: 'offshoot_diff', input: { database: 'app', target: 'attempt-1', summary: true } }] },
      {
        calls: [
          {
            tool: 'offshoot_query',
            input: {
              database: 'app',
              branch: 'attempt-1',
              at: 'tests-pass',
              sql: '-- a leading comment is SQL, not a flag\nSELECT body FROM notes ORDER BY id',
            },
          },
        ],
      },
      { text: 'done' },
    ]);
    const outputs = Object.fromEntries(
      r.steps.flatMap((s) => s.toolResults.map((t) => [t.toolName, t.output as Record<string, unknown>])),
    );
    assert.deepEqual(
      [outputs['offshoot_fork']?.['ttl'], outputs['offshoot_fork']?.['ttl_source'], outputs['offshoot_fork']?.['via']],
      ['2h0m0s', 'explicit', 'at-rest'],
    );
    assert.equal(outputs['offshoot_checkout']?.['live'], false);
    assert.equal(outputs['offshoot_checkpoint']?.['kind'], 'segment');
    const diff = outputs['offshoot_diff'] as {
      summary_only: boolean;
      tables: Array<{ table: string; status: string }>;
    };
    assert.equal(diff.summary_only, true);
    assert.equal(diff.tables.find((t) => t.table === 'notes')?.status, 'changed');
    assert.deepEqual(outputs['offshoot_query'], {
      db: 'app',
      branch: 'attempt-1',
      at: 'tests-pass',
      source: 'checkpoint',
      columns: ['body'],
      rows: [['seed'], ['new']],
      truncated: false,
    });
    const lines = commands();
    assert.equal(lines.length, 5, lines.join('\n'));
    for (const verb of ['fork', 'checkpoint']) {
      const line = lines.find((l) => l.includes(` ${verb} `));
      assert.match(line ?? '', /--json/);
      assert.match(line ?? '', /--actor=agent/, `${verb} says an agent asks`);
      assert.doesNotMatch(line ?? '', /--allow-force/);
    }
  });

  test('a forced promote onto protected main waits for the human (one --check run); approved, that call forces', async () => {
    const input = { database: 'app', source: 'attempt-1', target: 'main', force: true };
    const before = commands().length;
    const first = await callOnce(tools(), 'offshoot_promote', input);
    const asked = commands().slice(before);
    assert.equal(asked.length, 1, asked.join('\n'));
    assert.match(asked[0] ?? '', / promote --check --onto=main --force --actor=agent -- app@attempt-1$/);
    assert.equal(human('query', 'app', 'SELECT count(*) FROM notes'), 'count(*)\n1\n', 'main is unchanged');
    const approved = await run(
      tools(),
      [(last) => ({ text: JSON.stringify(last) })],
      answered(first.result, approvalOf(first.content), true),
    );
    assert.match(approved.text, /"target":"main"/);
    assert.match(commands().at(-1) ?? '', / promote --onto=main --force --actor=agent --allow-force -- app@attempt-1$/);
    assert.equal(human('query', 'app', 'SELECT count(*) FROM notes'), 'count(*)\n2\n', 'main holds the attempt');

    human('fork', 'app', 'scratch');
    const d = await callOnce(tools(), 'offshoot_destroy', { database: 'app', branch: 'scratch' });
    assert.deepEqual(
      d.content.map((c) => c.type),
      ['tool-result'],
      'an unforced destroy of a fork is not put to the human',
    );
    assert.doesNotMatch(human('status', 'app'), /app@scratch/);
  });

  test('rollback of a fork runs at once, as does a first one of protected main; a second one asks first', async () => {
    const rb = await callOnce(tools(), 'offshoot_rollback', { database: 'app', branch: 'attempt-1', to: 'fork' });
    assert.deepEqual(
      rb.content.map((c) => c.type),
      ['tool-result'],
    );
    assert.equal(human('query', 'app@attempt-1', 'SELECT count(*) FROM notes'), 'count(*)\n1\n');
    const once = await callOnce(tools(), 'offshoot_rollback', { database: 'app', to: 'promote' });
    assert.equal((once.content[0] as { output: { protected: boolean } }).output.protected, true);
    const before = commands().length;
    approvalOf((await callOnce(tools(), 'offshoot_rollback', { database: 'app', to: 'promote' })).content);
    assert.ok(
      commands()
        .slice(before)
        .every((l) => l.includes(' rollback --check ')),
      'nothing was rolled back before the human answered',
    );
  });

  test("a CLI failure is the client's OffshootError with the CLI's code", async () => {
    const missing = await callOnce(tools(), 'offshoot_checkout', { database: 'app', branch: 'nope' });
    const err = (missing.content[0] as { error: unknown }).error;
    assert.ok(err instanceof OffshootError && isOffshootError(err, 'NOT_FOUND'), String(err));
    assert.ok(isOffshootError(err.cause, 'NOT_FOUND'));
  });
});
