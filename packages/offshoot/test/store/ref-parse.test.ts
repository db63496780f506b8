// A ref read as text (how status lists) is refused exactly as one read as bytes, with the message naming the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hasCode } from '../../src/core/errors.js';
import { parseRef } from '../../src/core/ref.js';

const good = {
  schema: 2,
  lineage: 'l1',
  epoch: 1,
  head_txid: 3,
  head_epoch: 1,
  checkpoints: { fork: { txid: 1, epoch: 1, created_at: '2026-01-01T00:00:00.000Z', meta: { k: 'v' } } },
  parent: 'app@main@1',
  ttl: '1h0m0s',
  meta: { owner: 'me' },
  base: { lineage: 'l0', txid: 1 },
  generation: 4,
};

const malformed: Array<[string, string]> = [
  ['{', 'not JSON'],
  ['[]', 'not an object'],
  [JSON.stringify({ ...good, schema: -1 }), 'schema is not a non-negative integer'],
  [JSON.stringify({ ...good, lineage: '' }), 'lineage is missing'],
  [JSON.stringify({ ...good, head_txid: 1.5 }), 'head_txid is not a non-negative integer'],
  [JSON.stringify({ ...good, checkpoints: [] }), 'checkpoints is not an object'],
  [JSON.stringify({ ...good, checkpoints: { a: 'x' } }), 'checkpoint a is not an object'],
  [JSON.stringify({ ...good, checkpoints: { a: { txid: -2 } } }), 'checkpoint a.txid is not a non-negative integer'],
  [
    JSON.stringify({ ...good, checkpoints: { a: { txid: 1, epoch: 'x' } } }),
    'checkpoint a.epoch is not a non-negative integer',
  ],
  [
    JSON.stringify({ ...good, checkpoints: { a: { txid: 1, created_at: 5 } } }),
    'checkpoint a.created_at is not a string',
  ],
  [JSON.stringify({ ...good, checkpoints: { a: { txid: 1, meta: [] } } }), 'checkpoint a.meta is not an object'],
  [JSON.stringify({ ...good, checkpoints: { a: { txid: 1, meta: { k: 1 } } } }), 'checkpoint a.meta.k is not a string'],
  [JSON.stringify({ schema: 1, lineage: 'l', checkpoints: { a: -1 } }), 'checkpoint a is not a non-negative integer'],
  [JSON.stringify({ ...good, touched_at: 7 }), 'touched_at is not a string'],
  [JSON.stringify({ ...good, meta: { k: null } }), 'meta.k is not a string'],
  [JSON.stringify({ ...good, base: { lineage: 'l0' } }), 'base.txid is not a non-negative integer'],
  [JSON.stringify({ ...good, base: 5 }), 'base is malformed'],
  [JSON.stringify({ ...good, generation: '1' }), 'generation is not a non-negative integer'],
];

test('a well-formed ref parses the same from its text and from its bytes', () => {
  const text = JSON.stringify(good);
  const fromText = parseRef(text);
  assert.deepEqual(fromText, parseRef(Buffer.from(text)));
  assert.deepEqual(Object.keys(fromText), Object.keys(parseRef(new Uint8Array(Buffer.from(text)))));
  assert.equal(fromText.checkpoints.fork?.meta?.k, 'v');
  assert.equal(fromText.meta?.owner, 'me');
});

test('a malformed ref is CORRUPT from its text as from its bytes, naming the field', () => {
  for (const [text, why] of malformed) {
    for (const body of [text, Buffer.from(text)]) {
      assert.throws(
        () => parseRef(body),
        (err: unknown) => hasCode(err, 'CORRUPT') && err.message === `ref is malformed: ${why}`,
        `${typeof body}: ${text}`,
      );
    }
  }
});

test('a ref of a newer schema is refused from its text too', () => {
  assert.throws(
    () => parseRef(JSON.stringify({ ...good, schema: 3 })),
    (err: unknown) => hasCode(err, 'SCHEMA_TOO_NEW'),
  );
});
