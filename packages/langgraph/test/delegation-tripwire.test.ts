import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { OffshootSaver } from '../src/index.js';

// SqliteSaver's own internals, called only by SqliteSaver itself on its own handle.
const INTERNAL = new Set(['constructor', 'setup', 'migratePendingSends']);

function methods(proto: object): string[] {
  return Object.getOwnPropertyNames(proto).filter((name) => !INTERNAL.has(name));
}

test('every public method of the installed BaseCheckpointSaver and SqliteSaver is OffshootSaver’s own', () => {
  const upstream = [...new Set([...methods(BaseCheckpointSaver.prototype), ...methods(SqliteSaver.prototype)])].sort();
  // A release that adds a method fails here first: delegate it in offshoot-saver.ts, then extend this list.
  assert.deepEqual(upstream, [
    'deleteThread',
    'get',
    'getDeltaChannelHistory',
    'getNextVersion',
    'getTuple',
    'list',
    'put',
    'putWrites',
    'toJSON',
  ]);
  const own = new Set(Object.getOwnPropertyNames(OffshootSaver.prototype));
  for (const name of upstream) assert.ok(own.has(name), `OffshootSaver does not delegate ${name}`);
  assert.deepEqual(Object.getOwnPropertyNames(SqliteSaver).sort(), ['fromConnString', 'length', 'name', 'prototype']);
  assert.ok(Object.getPrototypeOf(OffshootSaver.prototype) === BaseCheckpointSaver.prototype);
});
