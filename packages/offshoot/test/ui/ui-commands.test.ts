// The dashboard's "next commands", fetched from a real `offshoot ui` and run through the CLI exactly as shown: a
// promote onto protected main, or the restore of its undo point, must carry the --force main needs, whether the
// detail reads every ref (with children) or only the ones the commands name (children=0, as the page asks).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { query, runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { startUi, type UiProcess } from './ui-support.js';

const TOKEN = 'ui-commands-token-0123456789abcdef';

describe('offshoot ui: the suggested commands run as pasted', () => {
  let s: StoreDir;
  let ui: UiProcess;

  function ok(args: string[]): string {
    const r = s.cli(args);
    assert.equal(r.code, 0, `offshoot ${args.join(' ')}: ${r.stderr}`);
    return r.stdout.trim();
  }

  // The page asks with children=0 (reading only the refs the commands need); both answers must suggest the same.
  async function commands(branch: string): Promise<Map<string, string>> {
    const [full, lean] = await Promise.all(
      ['', '?children=0'].map(async (q) => {
        const res = await fetch(`${ui.url}api/dbs/app/branches/${branch}${q}`, {
          headers: { Authorization: `Bearer ${TOKEN}` },
        });
        assert.equal(res.status, 200);
        return ((await res.json()) as { commands: Array<{ label: string; command: string }> }).commands;
      }),
    );
    assert.deepEqual(lean, full, `the same commands for ${branch} without children`);
    return new Map((full ?? []).map((c) => [c.label, c.command]));
  }

  /** Runs a suggested command through the CLI against this store, word for word. */
  function run(command: string | undefined): void {
    const words = command?.split(' ') ?? [];
    assert.equal(words[0], 'offshoot', `a command to run: ${command}`);
    ok(words.slice(1));
  }

  before(async () => {
    s = makeStoreDir();
    ok(['create', 'app']);
    runSql(ok(['checkout', 'app']), 'CREATE TABLE t(v); INSERT INTO t VALUES (1);');
    ok(['checkpoint', 'app', 'one']);
    ok(['fork', 'app', 'attempt']);
    runSql(ok(['checkout', 'app@attempt']), 'INSERT INTO t VALUES (2);');
    ok(['checkpoint', 'app@attempt', 'two']);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
  });

  after(async () => {
    await ui?.stop();
    s?.cleanup();
  });

  test('main is offered neither a promote nor a diff onto itself', async () => {
    const cmds = [...(await commands('main')).values()];
    assert.ok(cmds.includes('offshoot rollback app@main --to one'), cmds.join('\n'));
    assert.deepEqual(
      cmds.filter((c) => c.includes('--onto main') || c.includes('diff app@main app@main')),
      [],
    );
  });

  test('promote onto main carries --force, and so does restoring main from its undo point; both run', async () => {
    const fork = await commands('attempt');
    assert.equal(fork.get('promote onto main'), 'offshoot promote app@attempt --onto main --force');
    assert.equal(fork.get('diff against main'), 'offshoot diff app@main app@attempt');
    run(fork.get('promote onto main'));
    run(fork.get('diff against main'));

    const undo = await commands('main-pre-promote');
    assert.equal(undo.get('undo: restore main'), 'offshoot promote app@main-pre-promote --onto main --force');
    run(undo.get('undo: restore main'));
    assert.equal(ok(['export', 'app', s.file('main.db')]), s.file('main.db'));
    assert.equal(query(s.file('main.db'), 'SELECT group_concat(v) FROM t;').trim(), '1');
  });

  test('an unprotected target gets no --force', async () => {
    ok(['fork', 'app', 'scratch']);
    ok(['promote', 'app@attempt', '--onto', 'scratch']);
    const undo = await commands('scratch-pre-promote');
    assert.equal(undo.get('undo: restore scratch'), 'offshoot promote app@scratch-pre-promote --onto scratch');
    run(undo.get('undo: restore scratch'));
  });
});
