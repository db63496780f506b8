import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command } from '../../src/cli/command.js';
import { ENTRIES } from '../../src/cli/registry.js';

const reference = readFileSync(fileURLToPath(new URL('../../../../docs/reference.md', import.meta.url)), 'utf8');

function commands(): Command[] {
  return ENTRIES.flatMap((e) => ('subcommands' in e ? e.subcommands : [e]));
}

test('docs/reference.md documents every command and every flag as built', () => {
  const list = commands();
  assert.ok(list.length >= 20, `expected the whole command set, found ${list.length}`);
  for (const c of list) {
    assert.ok(reference.includes(`### \`${c.name}\``), `docs/reference.md has no section for "${c.name}"`);
    assert.ok(reference.includes(`usage: offshoot ${c.name}`), `docs/reference.md lacks the usage line of "${c.name}"`);
    for (const flag of Object.keys(c.flags)) {
      assert.ok(reference.includes(`--${flag}`), `docs/reference.md does not mention --${flag} of "${c.name}"`);
    }
  }
});
