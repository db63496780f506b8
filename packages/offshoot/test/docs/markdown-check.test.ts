// scripts/check-markdown.mjs (run by `make check`) against samples of each way Markdown renders broken without a
// parse error, against a clean sample, and against every Markdown file of the repository.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { repoRoot } from '../e2e/cli-harness.js';

const checker = join(repoRoot, 'scripts/check-markdown.mjs');
const fence = '```';

function check(files: string[]): { code: number | null; stderr: string } {
  const r = spawnSync(process.execPath, [checker, ...files], { cwd: repoRoot, encoding: 'utf8' });
  return { code: r.status, stderr: r.stderr };
}

describe('check-markdown', () => {
  let dir: string;
  const sample = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'offshoot-md-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const broken: Array<[string, string, RegExp]> = [
    ['unclosed.md', `# T\n\n${fence}sh\necho hi\n\nmore prose\n`, /:3: the ``` fence opened here is never closed/],
    [
      'four-backticks.md',
      `# T\n\n\`${fence}sh\nclaude mcp add x\n${fence}json\n{}\n${fence}\n\n## Docs\n\n- a\n\`${fence}\n`,
      /:5: a fence line inside the ```` fence opened at line 3/,
    ],
    ['table-pipe.md', '| a | b |\n| - | - |\n| `x` | `(one | two)` |\n', /:3: table row has 3 cells, its header 2/],
    [
      'table-prose.md',
      '| a | b |\n| - | - |\n| 1 | 2 |\n| a paragraph the table swallowed |\n',
      /:4: table row has 1 cells/,
    ],
    ['backslash.md', 'errors read `no \\`offshoot\\` on PATH` here\n', /code span ends in a backslash/],
    ['stray-backtick.md', 'a `span that never closes\n', /a stray backtick in the rendered text/],
    ['glued.md', 'the code is`NOT_FOUND` here\n', /code span glued to the word before it/],
    ['literal-underscore.md', 'required: `database`_ alone\n', /a stray _ or \* next to `database`/],
    ['required.md', '| arg |\n| - |\n| `database`_, `target`_ |\n', /emphasis \(_\) glued to a code span/],
  ];
  for (const [name, text, problem] of broken) {
    test(`fails on ${name.replace('.md', '')}`, () => {
      const r = check([sample(name, text)]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, problem);
    });
  }

  test('passes clean Markdown: closed and nested-safe fences, escaped pipes, double-backtick spans, escaped *', () => {
    const ok = sample(
      'clean.md',
      [
        '# T',
        '',
        `\`${fence}md`,
        `${fence}sh`,
        'echo inside a longer fence, on purpose',
        `${fence}`,
        `\`${fence}`,
        '',
        '| tool | args |',
        '| ---- | ---- |',
        '| `q` | `database`\\*, `(a \\| b)` |',
        '',
        'an error reads ``no `offshoot` on PATH``; the `PRAGMA`s and `require`d modules are fine.',
        '',
      ].join('\n'),
    );
    const r = check([ok]);
    assert.equal(r.code, 0, r.stderr);
  });

  test('every Markdown file of the repository renders clean', () => {
    const r = check([]);
    assert.equal(r.code, 0, r.stderr);
  });
});
