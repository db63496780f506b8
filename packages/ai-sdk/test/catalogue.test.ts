// One catalogue, two surfaces: the tools `offshoot mcp` lists (the official MCP client asks a real server) and the
// tools offshootTools builds carry the same names, descriptions, input and output schemas, compared as each surface
// publishes them.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { asSchema, type Tool } from 'ai';
import { offshootTools } from '../src/index.js';

const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'offshoot-catalogue-'));
const store = join(dir, 'store');
let mcp: Client;

/**
 * A JSON schema as both surfaces mean it: without the dialect each stamps on it, and without the closed objects
 * (`additionalProperties: false`) the AI SDK writes where it renders zod's output side and the MCP SDK its input
 * side (zod strips unknown keys either way).
 */
function plain(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(plain);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$schema' || (k === 'additionalProperties' && v === false)) continue;
    out[k] = plain(v);
  }
  return out;
}

/** The description of a promote schema's if_head. */
function ifHeadText(schema: unknown): string {
  const props = (schema as { properties?: Record<string, { description?: string }> }).properties;
  return String(props?.['if_head']?.description);
}

/** A promote schema as both surfaces mean it, but for the description of if_head. */
function withoutIfHeadText(schema: unknown): unknown {
  const s = plain(schema) as { properties: Record<string, Record<string, unknown>> };
  const { description: _, ...ifHead } = s.properties['if_head'] ?? {};
  return { ...s, properties: { ...s.properties, if_head: ifHead } };
}

before(async () => {
  execFileSync(BIN, ['-store', store, 'init']);
  mcp = new Client({ name: 'catalogue-test', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({ command: BIN, args: ['-store', store, 'mcp', '-default-ttl', '2h'], stderr: 'pipe' }),
  );
});
after(async () => {
  await mcp.close();
  rmSync(dir, { recursive: true, force: true });
});

test('the MCP server and the AI SDK tools come from one catalogue: names, descriptions, schemas', async () => {
  const listed = new Map((await mcp.listTools()).tools.map((t) => [t.name, t]));
  const tools: Array<[string, Tool]> = Object.entries(offshootTools({ store, defaultTtl: '2h0m0s' }));
  assert.equal(tools.length, 8);
  for (const [name, t] of tools) {
    const served = listed.get(name);
    assert.ok(served !== undefined, `${name} is an MCP tool too`);
    const schema = await asSchema(t.inputSchema).jsonSchema;
    if (name === 'offshoot_promote') {
      // The one difference, the surface's: these tools default if_head for a fork they made, and say so.
      const description = String(t.description);
      assert.ok(description.startsWith(`${served.description} `), `${name}: the MCP description, then one more`);
      assert.match(description.slice(String(served.description).length), /offshoot_fork .*if_head/);
      const ours = ifHeadText(schema);
      const theirs = ifHeadText(served.inputSchema);
      assert.ok(ours.startsWith(theirs) && /default: the head a fork made by offshoot_fork/.test(ours), ours);
      assert.deepEqual(withoutIfHeadText(schema), withoutIfHeadText(served.inputSchema), `${name}: one input schema`);
    } else {
      assert.equal(t.description, served.description, `${name}: one description`);
      assert.deepEqual(plain(schema), plain(served.inputSchema), `${name}: one input schema`);
    }
    assert.deepEqual(
      plain(await asSchema(t.outputSchema).jsonSchema),
      plain(served.outputSchema),
      `${name}: one output schema`,
    );
  }
  const ttl = listed.get('offshoot_fork')?.inputSchema.properties?.['ttl'] as { description?: string } | undefined;
  assert.match(String(ttl?.description), /default 2h0m0s/);
});
