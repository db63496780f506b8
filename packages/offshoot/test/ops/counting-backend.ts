// A Backend proxy that records every request (operation, key, bytes written), so cost tests assert counts, not time.
import { statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Backend, Body, GetResult, ObjectInfo, PutCondition } from '../../src/store/backend.js';
import { getEach } from '../../src/store/get-each.js';

/** One request the proxy passed through. */
export interface BackendCall {
  op: 'get' | 'getStream' | 'getToFile' | 'stat' | 'put' | 'delete' | 'deleteMany' | 'list' | 'copy';
  key: string;
  /** Bytes written by a put. */
  bytes?: number;
}

function bodySize(body: Body): number {
  return body instanceof Uint8Array ? body.byteLength : statSync(body.file).size;
}

/** Wraps a backend, recording each call in `calls`; `reset()` starts a new measurement. */
export class CountingBackend implements Backend {
  calls: BackendCall[] = [];

  constructor(private readonly inner: Backend) {}

  get name(): string {
    return this.inner.name;
  }

  get capabilities() {
    return this.inner.capabilities;
  }

  /** Forgets the calls recorded so far. */
  reset(): void {
    this.calls = [];
  }

  /** The recorded calls of one kind, optionally only those whose key starts with prefix. */
  of(op: BackendCall['op'], prefix = ''): BackendCall[] {
    return this.calls.filter((c) => c.op === op && c.key.startsWith(prefix));
  }

  /** Calls that read object bytes (get, getStream, getToFile) of keys under prefix. */
  reads(prefix = ''): BackendCall[] {
    return this.calls.filter(
      (c) => (c.op === 'get' || c.op === 'getStream' || c.op === 'getToFile') && c.key.startsWith(prefix),
    );
  }

  get(key: string): Promise<GetResult> {
    this.calls.push({ op: 'get', key });
    return this.inner.get(key);
  }

  getStream(key: string): Promise<Readable> {
    this.calls.push({ op: 'getStream', key });
    return this.inner.getStream(key);
  }

  getToFile(key: string, path: string): Promise<number> {
    this.calls.push({ op: 'getToFile', key });
    return this.inner.getToFile(key, path);
  }

  stat(key: string): Promise<ObjectInfo | undefined> {
    this.calls.push({ op: 'stat', key });
    return this.inner.stat(key);
  }

  put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    this.calls.push({ op: 'put', key, bytes: bodySize(body) });
    return this.inner.put(key, body, cond);
  }

  delete(key: string, opts?: { ifMatch?: string }): Promise<void> {
    this.calls.push({ op: 'delete', key });
    return this.inner.delete(key, opts);
  }

  deleteMany(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.calls.push({ op: 'deleteMany', key });
    return this.inner.deleteMany(keys);
  }

  list(prefix: string): Promise<ObjectInfo[]> {
    this.calls.push({ op: 'list', key: prefix });
    return this.inner.list(prefix);
  }

  /** A list, recorded as one and passed through list, so a subclass intercepting listings sees this one too. */
  async listKeys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((o) => o.key);
  }

  /** A get per key, each recorded and passed through get, so a subclass intercepting reads sees these too. */
  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    return getEach(this, keys);
  }

  copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    this.calls.push({ op: 'copy', key: dst });
    return this.inner.copy(src, dst, cond);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
