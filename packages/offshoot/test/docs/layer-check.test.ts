// scripts/check-layers.mjs (run by `make check`) against a copy of the sources with one import planted in it: the
// front door of ops (nothing outside ops imports ops/helpers/**), the order of the helper folders, the rule that a
// verb never imports another verb; and against the copy as it stands, which passes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../e2e/cli-harness.js';

// What the checker reads: the engine's sources and the page, the client, the catalogue and the SDK adapters.
const READ = [
  'scripts/check-layers.mjs',
  'packages/offshoot/src',
  'packages/offshoot/web',
  'packages/client/src',
  'packages/tools/src',
  'packages/langgraph/src',
  'packages/ai-sdk/src',
  'packages/evalite/src',
];

describe('check-layers', () => {
  let root: string;
  const planted: string[] = [];
  const plant = (rel: string, text: string): void => {
    const path = join(root, 'packages/offshoot/src', rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    planted.push(path);
  };
  const check = (): { code: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [join(root, 'scripts/check-layers.mjs')], { encoding: 'utf8' });
    for (const p of planted.splice(0)) rmSync(p);
    return { code: r.status, stderr: r.stderr };
  };
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'offshoot-layers-'));
    for (const rel of READ)
      cpSync(join(repoRoot, rel), join(root, rel), {
        recursive: true,
        filter: (src) => !src.includes('node_modules') && !src.endsWith('/dist'),
      });
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  test('passes the sources as they stand', () => {
    const r = check();
    assert.equal(r.code, 0, r.stderr);
  });

  const broken: Array<[string, string, string, RegExp]> = [
    [
      'a layer above ops reaching into its helpers',
      'daemon/planted.ts',
      "export { readBranch } from '../ops/helpers/branch/branch-ref.js';\n",
      /daemon\/planted\.ts: imports \.\.\/ops\/helpers\/branch\/branch-ref\.js; outside ops, only its top-level files/,
    ],
    [
      'a type-only import of a helper from the session',
      'session/planted.ts',
      "import type { OpsContext } from '../ops/helpers/context/context.js';\nexport type Planted = OpsContext;\n",
      /session\/planted\.ts: imports .*outside ops, only its top-level files/,
    ],
    [
      'a helper folder importing one above its own (a circle among the floors)',
      'ops/helpers/context/planted.ts',
      "export { reapExpired } from '../gc/reap-expired.js';\n",
      /helpers\/context\/ may not import helpers\/gc\/, a floor above it/,
    ],
    [
      'the chain helpers importing the merge helpers, which stand on them',
      'ops/helpers/chain/planted.ts',
      "export { threeWay } from '../merge/three-way.js';\n",
      /helpers\/chain\/ may not import helpers\/merge\/, a floor above it/,
    ],
    [
      'a helper importing the front door',
      'ops/helpers/branch/planted.ts',
      "export type { Actor } from '../../policy.js';\n",
      /a helper may not import the top of ops/,
    ],
    [
      'a verb importing another verb',
      'ops/planted.ts',
      "export { fork } from './fork.js';\n",
      /ops\/planted\.ts: may not import the verb ops\/fork\.ts/,
    ],
    [
      'a file in ops/helpers/ outside a concern folder',
      'ops/helpers/planted.ts',
      'export const planted = 1;\n',
      /ops\/helpers\/ holds folders by concern only/,
    ],
  ];
  for (const [what, rel, text, problem] of broken) {
    test(`fails on ${what}`, () => {
      plant(rel, text);
      const r = check();
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, problem);
    });
  }
});
