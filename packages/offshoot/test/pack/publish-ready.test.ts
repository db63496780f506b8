// Every package ready to publish the day the owners choose, and nothing published: `npm publish --dry-run` of each
// npm package as its checkout would publish it (scripts/pack.mjs --publish-dry-run), `twine check --strict` of every
// wheel and sdist make pack builds, and what each ships: the license, a readme, the repository, types, its entry
// points, and no test (nor a source map of one).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../e2e/cli-harness.js';
import { type Packed, packAll, unpack, packPython, skipUnlessFull } from './pack-harness.js';

interface Manifest {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { url?: string; directory?: string };
  publishConfig?: { access?: string };
  main?: string;
  types?: string;
  bin?: Record<string, string>;
  exports?: Record<string, { types: string; default: string }>;
}

interface DryRun {
  files: string[];
  warnings: string[];
}

// npm says this on every dry run without a login; it is the dry run's, not the package's.
const LOGIN_NOTICE = /requires you to be logged in/;
const TEST_PATH = /(^|\/)(test|tests|__tests__|fixtures)\/|\.(test|spec)\.[cm]?[jt]sx?(\.map)?$/;
const license = readFileSync(join(repoRoot, 'LICENSE'), 'utf8');

const workspaces = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { workspaces: string[] })
  .workspaces;
const npmPackages = workspaces
  .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(repoRoot, dir, 'package.json'), 'utf8')) as Manifest }))
  .filter((p) => p.manifest.private !== true);

/** The file a shipped path is read from in the checkout: the CLI bundles the client and the catalogue under its node_modules. */
function sourceOf(dir: string, path: string): string {
  const bundled = /^node_modules\/@offshoot\/(client|tools)\//.exec(path);
  return bundled
    ? join(repoRoot, 'packages', bundled[1] ?? '', path.slice(bundled[0].length))
    : join(repoRoot, dir, path);
}

describe('ready to publish, nothing published', { skip: skipUnlessFull }, () => {
  let report: Record<string, DryRun>;
  let packed: Packed;

  before(() => {
    report = JSON.parse(
      execFileSync(process.execPath, [join(repoRoot, 'scripts/pack.mjs'), '--publish-dry-run'], {
        cwd: repoRoot,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as Record<string, DryRun>;
    packed = packAll();
  });
  after(() => unpack(packed));

  test('npm publish --dry-run passes for every npm package, with no warning of its own', () => {
    assert.deepEqual(Object.keys(report).sort(), npmPackages.map((p) => p.manifest.name).sort());
    for (const [name, r] of Object.entries(report)) {
      assert.deepEqual(
        r.warnings.filter((w) => !LOGIN_NOTICE.test(w)),
        [],
        `${name}: npm publish --dry-run warns`,
      );
    }
  });

  for (const { dir, manifest: m } of npmPackages) {
    test(`${m.name}: license, readme, repository, types and entry points shipped, no test`, () => {
      const files = new Set(report[m.name]?.files ?? []);
      assert.equal(m.license, 'Apache-2.0');
      assert.ok(files.has('LICENSE'), 'ships LICENSE');
      assert.equal(readFileSync(join(repoRoot, dir, 'LICENSE'), 'utf8'), license, 'the repository LICENSE, as is');
      assert.ok(files.has('README.md'), 'ships a README');
      assert.match(m.repository?.url ?? '', /^git\+https:\/\/github\.com\/[\w-]+\/[\w-]+\.git$/);
      assert.equal(m.repository?.directory, dir);
      if (m.name.startsWith('@')) assert.equal(m.publishConfig?.access, 'public', 'a scoped package publishes public');
      const entries = [
        m.main,
        m.types,
        ...Object.values(m.bin ?? {}),
        ...Object.values(m.exports ?? {}).flatMap((e) => [e.types, e.default]),
      ].filter((e): e is string => e !== undefined);
      assert.ok(m.types !== undefined, 'declares its types');
      for (const e of entries) assert.ok(files.has(e.replace(/^\.\//, '')), `${m.name} ships ${e}`);
      for (const b of Object.values(m.bin ?? {}))
        assert.match(
          readFileSync(join(repoRoot, dir, b), 'utf8'),
          /^#!\/usr\/bin\/env node\n/,
          `${b} runs as a command`,
        );
      const tests = [...files].filter((f) => TEST_PATH.test(f));
      assert.deepEqual(tests, [], 'no test file');
      for (const f of [...files].filter((x) => x.endsWith('.map'))) {
        const { sources } = JSON.parse(readFileSync(sourceOf(dir, f), 'utf8')) as { sources: string[] };
        assert.deepEqual(
          sources.filter((s) => TEST_PATH.test(s)),
          [],
          `${f} maps no test`,
        );
      }
    });
  }

  test('twine check --strict passes for every wheel and sdist make pack builds', () => {
    const twine = join(packPython(), '..', 'twine');
    const artifacts = readdirSync(packed.python).map((f) => join(packed.python, f));
    assert.equal(artifacts.length, 4);
    const r = spawnSync(twine, ['check', '--strict', ...artifacts], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.match(/PASSED/g)?.length, 4, r.stdout);
  });

  test('every wheel and sdist carries the license, the readme, the repository and its entry points, no test', () => {
    const inspect = `
import json, sys, tarfile, zipfile
out = {}
for path in sys.argv[1:]:
    if path.endswith(".whl"):
        z = zipfile.ZipFile(path); names = z.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        meta = z.read(info + "/METADATA").decode()
        eps = z.read(info + "/entry_points.txt").decode() if info + "/entry_points.txt" in names else ""
    else:
        t = tarfile.open(path); names = [n.split("/", 1)[1] for n in t.getnames() if "/" in n]
        meta = t.extractfile(next(m for m in t.getmembers() if m.name.endswith("/PKG-INFO"))).read().decode(); eps = ""
    out[path.rsplit("/", 1)[1]] = {"names": names, "meta": meta, "eps": eps}
print(json.dumps(out))
`;
    const artifacts = readdirSync(packed.python).map((f) => join(packed.python, f));
    const seen = JSON.parse(execFileSync(packPython(), ['-c', inspect, ...artifacts], { encoding: 'utf8' })) as Record<
      string,
      { names: string[]; meta: string; eps: string }
    >;
    for (const [file, a] of Object.entries(seen)) {
      assert.match(a.meta, /^License-Expression: Apache-2\.0$/m, file);
      assert.match(a.meta, /^License-File: LICENSE$/m, file);
      assert.ok(
        a.names.some((n) => n === 'LICENSE' || n.endsWith('.dist-info/licenses/LICENSE')),
        `${file} ships LICENSE`,
      );
      assert.match(a.meta, /^Project-URL: Repository, https:\/\/github\.com\//m, file);
      assert.match(a.meta, /^Description-Content-Type: text\/markdown$/m, `${file} carries its README`);
      assert.doesNotMatch(a.meta, /\]\(\.\.?\//, `${file}: its README links nothing relative (PyPI cannot follow it)`);
      assert.deepEqual(
        a.names.filter((n) => /(^|\/)(tests?|bench)\//.test(n)),
        [],
        `${file} ships no test`,
      );
      assert.ok(
        a.names.some((n) => n.endsWith('/py.typed')),
        `${file} ships py.typed (it says Typing :: Typed)`,
      );
    }
    const db = seen['offshoot_db-0.4.0-py3-none-any.whl'];
    assert.match(db?.eps ?? '', /\[pytest11\]\noffshoot = offshoot\.pytest_plugin/);
    const saver = seen['langgraph_checkpoint_offshoot-0.4.0-py3-none-any.whl'];
    assert.match(saver?.meta ?? '', /^Requires-Dist: offshoot-db>=0\.4$/m, 'the saver requires offshoot-db by name');
    assert.ok(existsSync(join(packed.python, 'offshoot_db-0.4.0-py3-none-any.whl')), 'and it is beside it');
  });
});
