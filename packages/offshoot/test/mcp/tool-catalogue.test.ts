// The MCP server serves the tool catalogue (@offshoot/tools): every tool, in its order, each with a run here and a
// question for the human exactly where the catalogue says a call may be put to one. The limits the catalogue's texts
// name are the ones the engine enforces.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MAIN_BRANCH as CATALOGUE_MAIN,
  OFFSHOOT_META_PREFIX as PREFIX,
  TOOL_LIMITS,
  toolCatalogue,
} from '@offshoot/tools';
import { META_LIMITS, OFFSHOOT_META_PREFIX } from '../../src/core/meta.js';
import { MAIN_BRANCH } from '../../src/core/target.js';
import { servedTools } from '../../src/mcp/server.js';
import { QUERY_LIMITS } from '../../src/ops/query.js';

test('the server registers the catalogue, in its order, with a question exactly where a call may need the human', () => {
  const served = servedTools({ defaultTtl: { kind: 'none' } });
  const catalogue = toolCatalogue({ defaultTtl: 'none', defaultIfHead: false });
  assert.deepEqual(
    served.map((t) => t.spec.name),
    Object.keys(catalogue),
  );
  for (const { spec, run } of served) {
    assert.equal(spec.description, catalogue[spec.name as keyof typeof catalogue].description);
    assert.equal(run.confirm !== undefined, spec.confirmable !== undefined, `${spec.name}: a question iff confirmable`);
  }
  assert.deepEqual(
    served.filter((t) => t.spec.confirmable !== undefined).map((t) => t.spec.name),
    ['offshoot_rollback', 'offshoot_promote', 'offshoot_destroy'],
  );
});

test("the limits the catalogue's texts name are the engine's", () => {
  assert.deepEqual(TOOL_LIMITS.meta, META_LIMITS);
  assert.deepEqual(TOOL_LIMITS.query, {
    defaultRows: QUERY_LIMITS.defaultRows,
    maxRows: QUERY_LIMITS.maxRows,
    maxBytes: QUERY_LIMITS.maxBytes,
  });
  assert.equal(CATALOGUE_MAIN, MAIN_BRANCH);
  assert.equal(PREFIX, OFFSHOOT_META_PREFIX);
});
