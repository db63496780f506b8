// docs/installation.md's Python blocks, pip's and uv's, run as written in empty directories against make pack's
// wheels, with no index: our packages come from the packed folder the line names, the rest (pytest, LangGraph) from
// the wheel folder of python/constraints.txt. The result is used, not just listed: the pytest plugin's fixtures are
// there, the saver imports, and the client drives the CLI.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../e2e/cli-harness.js';
import { docBlocks } from '../e2e/doc-blocks.js';
import {
  DOCS_DIST,
  offIndexEnv,
  type Packed,
  packAll,
  unpack,
  runDocLine,
  skipUnlessFull,
  toolsBin,
  wheelFolder,
} from './pack-harness.js';

const USE = `
import offshoot, langgraph_checkpoint_offshoot
store = offshoot.Store("./store"); store.init(); store.create("app")
print(store.dbs(), langgraph_checkpoint_offshoot.OffshootSaver.__name__)
`;

describe("docs/installation.md's Python install, from make pack's wheels", { skip: skipUnlessFull }, () => {
  let packed: Packed;
  let tmp: string;
  let bin: string;
  let wheels: string;
  const blocks = docBlocks(join(repoRoot, 'docs/installation.md')).filter((b) =>
    b.code.includes(`--find-links ${DOCS_DIST}/python`),
  );

  before(() => {
    packed = packAll();
    tmp = mkdtempSync(join(tmpdir(), 'offshoot-pyinstall-'));
    bin = toolsBin(tmp);
    wheels = wheelFolder('main');
  });
  after(() => {
    rmSync(tmp, { recursive: true, force: true });
    unpack(packed);
  });

  test('make pack writes a wheel and an sdist of every package under python/', () => {
    assert.deepEqual(readdirSync(packed.python).sort(), [
      'langgraph_checkpoint_offshoot-0.4.0-py3-none-any.whl',
      'langgraph_checkpoint_offshoot-0.4.0.tar.gz',
      'offshoot_db-0.4.0-py3-none-any.whl',
      'offshoot_db-0.4.0.tar.gz',
    ]);
  });

  test('the page gives one pip block and one uv block', () => {
    assert.deepEqual(
      blocks.map((b) => b.code.split('\n')[1]?.split(' ')[0]),
      ['.venv/bin/pip', 'uv'],
      'pip, then uv',
    );
  });

  for (const [i, tool] of ['pip', 'uv'].entries()) {
    test(`the ${tool} block installs both packages into an empty project, and they work there`, () => {
      const work = join(tmp, tool);
      mkdirSync(work);
      const env = offIndexEnv(tmp, wheels, { PATH: `${bin}:${process.env.PATH ?? ''}` });
      runDocLine(blocks[i]?.code ?? '', packed, work, env);
      const python = join(work, '.venv/bin/python');
      const used = spawnSync(python, ['-c', USE], { cwd: work, env, encoding: 'utf8' });
      assert.equal(used.status, 0, used.stderr);
      assert.equal(used.stdout, "['app'] OffshootSaver\n");
      const fixtures = spawnSync(python, ['-m', 'pytest', '--fixtures', '-q', '-p', 'no:cacheprovider'], {
        cwd: work,
        env,
        encoding: 'utf8',
      });
      assert.match(fixtures.stdout, /offshoot_fork/, 'the pytest11 entry point registers the plugin');
      const where = spawnSync(python, ['-c', 'import offshoot; print(offshoot.__file__)'], { env, encoding: 'utf8' });
      assert.ok(where.stdout.startsWith(join(work, '.venv')), `offshoot imports from the venv: ${where.stdout}`);
    });
  }
});
