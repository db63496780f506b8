// The Claude Code plugin in the repository, checked against Claude Code's documented manifest schemas (Claude Code's
// own validator runs in `make plugin-check`, its CLI being too large for every test run), and its advisory hooks run
// for real: context only, never a block, silent when offshoot is not installed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { LOOP_RULES, LOOP_STEPS, RULES_SNIPPET } from '../../src/mcp/loop-text.js';
import { repoRoot } from '../e2e/cli-harness.js';

const KEBAB = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const plugin = join(repoRoot, 'plugins/offshoot');
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, unknown>;
// Hook events Claude Code documents.
const EVENTS = new Set([
  'PreToolUse',
  'PostToolUse',
  'UserPromptSubmit',
  'Notification',
  'Stop',
  'SubagentStop',
  'PreCompact',
  'SessionStart',
  'SessionEnd',
]);

test('the marketplace manifest at the repository root lists the plugin as its schema requires', () => {
  const m = json(join(repoRoot, '.claude-plugin/marketplace.json'));
  assert.match(m.name as string, KEBAB);
  assert.equal(typeof (m.owner as { name?: unknown }).name, 'string', 'owner is an object with a name');
  const plugins = m.plugins as Array<Record<string, unknown>>;
  assert.ok(Array.isArray(plugins) && plugins.length === 1);
  const [entry] = plugins as [Record<string, unknown>];
  assert.equal(entry.name, 'offshoot');
  assert.match(entry.source as string, /^\.\//, 'a relative source starts with ./');
  assert.equal(join(repoRoot, entry.source as string), plugin);
  const manifest = json(join(plugin, '.claude-plugin/plugin.json'));
  assert.equal(manifest.name, entry.name, 'the entry names the plugin as its manifest does');
  assert.equal(manifest.version, entry.version);
});

test('the plugin manifest, MCP server and hooks follow the documented layout', () => {
  const manifest = json(join(plugin, '.claude-plugin/plugin.json'));
  assert.match(manifest.name as string, KEBAB);
  assert.match(manifest.version as string, /^\d+\.\d+\.\d+$/);
  assert.equal(typeof (manifest.author as { name?: unknown }).name, 'string', 'author is an object');
  for (const auto of ['hooks', 'mcpServers', 'skills'])
    assert.ok(!(auto in manifest), `${auto} is found at its default path; naming it again is a duplicate error`);
  const pkg = json(join(repoRoot, 'packages/offshoot/package.json'));
  assert.equal(manifest.version, pkg.version);

  const mcp = json(join(plugin, '.mcp.json')).mcpServers as Record<string, { command: string; args: string[] }>;
  assert.deepEqual(mcp.offshoot, { command: 'offshoot', args: ['mcp'] });

  const hooks = json(join(plugin, 'hooks/hooks.json')).hooks as Record<
    string,
    Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>
  >;
  for (const [event, groups] of Object.entries(hooks)) {
    assert.ok(EVENTS.has(event), `${event} is a documented hook event`);
    for (const g of groups)
      for (const h of g.hooks) {
        assert.equal(h.type, 'command');
        const script = /\$\{CLAUDE_PLUGIN_ROOT\}\/([^"\s]+)/.exec(h.command as string)?.[1];
        assert.ok(script && existsSync(join(plugin, script)), `${h.command} names a script in the plugin`);
        assert.ok((statSync(join(plugin, script)).mode & 0o111) !== 0, `${script} is executable`);
      }
  }
  assert.equal(hooks.PreToolUse?.[0]?.matcher, 'Bash');
});

test('the skill teaches the six-step loop, its rules and the rules-file snippet, as the server and docs state them', () => {
  const skill = readFileSync(join(plugin, 'skills/offshoot-loop/SKILL.md'), 'utf8');
  const front = /^---\nname: ([^\n]+)\ndescription: ([^\n]+)\n---\n/.exec(skill);
  assert.equal(front?.[1], 'offshoot-loop');
  assert.ok((front?.[2] ?? '').length > 50, 'the description says when to use it');
  for (const text of [RULES_SNIPPET, LOOP_STEPS, LOOP_RULES])
    assert.ok(skill.includes(text), `the skill has:\n${text}`);
  const docs = readFileSync(join(repoRoot, 'docs/mcp.md'), 'utf8');
  assert.ok(docs.includes(RULES_SNIPPET), 'docs/mcp.md has the rules-file snippet');
});

function runHook(mode: string, input: string, withOffshoot: boolean): { code: number | null; stdout: string } {
  const bin = mkdtempSync(join(tmpdir(), 'offshoot-hook-'));
  try {
    // PATH holds node (the hook's runtime) and, when wanted, offshoot; nothing else from this machine.
    symlinkSync(process.execPath, join(bin, 'node'));
    if (withOffshoot) symlinkSync(join(repoRoot, 'offshoot'), join(bin, 'offshoot'));
    const r = spawnSync('/bin/sh', [join(plugin, 'hooks/advise.sh'), mode], {
      input,
      encoding: 'utf8',
      env: { PATH: `${bin}:${dirname('/bin/sh')}` },
    });
    return { code: r.status, stdout: r.stdout };
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

test('the hooks only add context, never block, and stay silent without offshoot', () => {
  const bash = (command: string) =>
    JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command } });
  const drop = bash("sqlite3 .offshoot/checkouts/app/main.db 'DROP TABLE users'");
  const advice = runHook('pre-bash', drop, true);
  assert.equal(advice.code, 0);
  const out = JSON.parse(advice.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(out.hookSpecificOutput.hookEventName, 'PreToolUse');
  assert.match(out.hookSpecificOutput.additionalContext, /main's checkout.*offshoot_fork/);
  assert.ok(!('decision' in out) && !('permissionDecision' in out.hookSpecificOutput), 'advice, not a decision');
  assert.deepEqual(runHook('pre-bash', bash('ls -la'), true), { code: 0, stdout: '' });
  assert.deepEqual(runHook('pre-bash', bash("sqlite3 app.db 'SELECT * FROM t'"), true), { code: 0, stdout: '' });
  assert.deepEqual(runHook('pre-bash', '{not json', true), { code: 0, stdout: '' });
  const start = JSON.parse(runHook('session-start', '{}', true).stdout) as {
    hookSpecificOutput: { additionalContext: string };
  };
  assert.equal(start.hookSpecificOutput.additionalContext, RULES_SNIPPET.replace(/\n/g, ' '));
  assert.deepEqual(runHook('pre-bash', drop, false), { code: 0, stdout: '' }, 'silent without offshoot');
  assert.deepEqual(runHook('session-start', '{}', false), { code: 0, stdout: '' });
});
