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
    assert.equal(t.description, served.description, `${name}: one description`);
    const schema = await asSchema(t.inputSchema).jsonSchema;
    assert.deepEqual(plain(schema), plain(served.inputSchema), `${name}: one input schema`);
    assert.deepEqual(
      plain(await asSchema(t.outputSchema).jsonSchema),
      plain(served.outputSchema),
      `${name}: one output schema`,
    );
  }
  const ttl = listed.get('offshoot_fork')?.inputSchema.properties?.['ttl'] as { description?: string } | undefined;
  assert.match(String(ttl?.description), /default 2h0m0s/);
});
