// Test doubles over any real Backend: a fault injector that fails, delays or cuts chosen calls the way a flaky
// object store would, and a counter of calls per method (a fork must cost a fixed number of store requests).
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fail } from '../../src/core/errors.js';
import type { OffshootError } from '../../src/core/errors.js';
import type {
  Backend,
  BackendCapabilities,
  Body,
  GetResult,
  ObjectInfo,
  PutCondition,
} from '../../src/store/backend.js';
import { getEach } from '../../src/store/get-each.js';

/** The Backend methods that reach the store. */
export type BackendMethod =
  | 'get'
  | 'getStream'
  | 'getToFile'
  | 'stat'
  | 'put'
  | 'delete'
  | 'deleteMany'
  | 'list'
  | 'copy';

/** Every method a fault or a counter can name. */
export const BACKEND_METHODS: readonly BackendMethod[] = [
  'get',
  'getStream',
  'getToFile',
  'stat',
  'put',
  'delete',
  'deleteMany',
  'list',
  'copy',
];

/**
 * What goes wrong. status: the server answered with this HTTP status (412 → ALREADY_EXISTS for a create-only put,
 * else CAS_CONFLICT; 409 → CAS_CONFLICT; 500/503 → UNAVAILABLE). timeout: the call hung until its deadline
 * (TIMEOUT, after afterMs). cut: the connection dropped mid-request (UNAVAILABLE). delay: the call is slow but
 * succeeds.
 */
export type Fault =
  | { status: 412 | 409 | 500 | 503 }
  | { timeout: true; afterMs?: number }
  | { cut: true }
  | { delayMs: number };

/** When a call matching method (and key) runs: which fault, and how many times. */
export interface FaultRule {
  method: BackendMethod | '*';
  /** Only calls on this key (a string), on keys it matches (a RegExp), or on keys it accepts. */
  key?: string | RegExp | ((key: string) => boolean);
  fault: Fault;
  /**
   * 'before' (default): the request never took effect. 'after': the store applied it and only the answer was
   * lost — the ambiguous failure a caller must survive (e.g. a put that landed but reported an error).
   */
  phase?: 'before' | 'after';
  /** Let this many matching calls through untouched first. */
  skip?: number;
  /** Fire on this many matching calls, then stop (default: every one). */
  times?: number;
}

/** One fault that fired. */
export interface FiredFault {
  method: BackendMethod;
  key: string;
  fault: Fault;
  phase: 'before' | 'after';
}

interface ArmedRule extends FaultRule {
  skipped: number;
  fired: number;
}

const keyMatches = (want: FaultRule['key'], key: string): boolean =>
  want === undefined || (typeof want === 'string' ? want === key : want instanceof RegExp ? want.test(key) : want(key));

function faultError(
  method: BackendMethod,
  key: string,
  fault: Fault,
  cond: PutCondition | { ifNoneMatch: true } | undefined,
): OffshootError {
  const where = `${method} ${key} (injected)`;
  if ('status' in fault) {
    if (fault.status === 412 && cond !== undefined && 'ifNoneMatch' in cond) {
      return fail('ALREADY_EXISTS', `${where}: 412 Precondition Failed`, {
        hint: 'create-only writes never replace an object; pick a new key or read the existing one',
      });
    }
    if (fault.status === 412 || fault.status === 409) {
      return fail('CAS_CONFLICT', `${where}: ${fault.status}`, {
        retryable: fault.status === 409,
        hint: 'another writer changed it first; re-read the object and apply the change to its current version',
      });
    }
    return fail('UNAVAILABLE', `${where}: ${fault.status} from the store`, {
      retryable: true,
      hint: 'the store is unavailable; retry after a pause',
    });
  }
  if ('timeout' in fault)
    return fail('TIMEOUT', `${where}: no answer before the deadline`, {
      retryable: true,
      hint: 'the store is slow or unreachable; retry',
    });
  return fail('UNAVAILABLE', `${where}: the connection was reset mid-request`, {
    retryable: true,
    hint: 'the connection to the store failed; retry',
  });
}

/** A Backend that forwards to inner except where a rule injects a fault. */
export class FaultBackend implements Backend {
  private rules: ArmedRule[] = [];
  /** Every fault injected so far, in order. */
  readonly fired: FiredFault[] = [];

  constructor(
    readonly inner: Backend,
    rules: readonly FaultRule[] = [],
  ) {
    for (const r of rules) this.inject(r);
  }

  get name(): string {
    return this.inner.name;
  }

  get capabilities(): BackendCapabilities {
    return this.inner.capabilities;
  }

  /** Adds a rule (checked after the existing ones); returns a function that removes it. */
  inject(rule: FaultRule): () => void {
    const armed: ArmedRule = { ...rule, skipped: 0, fired: 0 };
    this.rules.push(armed);
    return () => {
      this.rules = this.rules.filter((r) => r !== armed);
    };
  }

  /** Removes every rule. */
  clear(): void {
    this.rules = [];
  }

  get(key: string): Promise<GetResult> {
    return this.run('get', key, undefined, () => this.inner.get(key));
  }

  getStream(key: string): Promise<Readable> {
    return this.run('getStream', key, undefined, () => this.inner.getStream(key));
  }

  getToFile(key: string, path: string): Promise<number> {
    return this.run('getToFile', key, undefined, () => this.inner.getToFile(key, path));
  }

  stat(key: string): Promise<ObjectInfo | undefined> {
    return this.run('stat', key, undefined, () => this.inner.stat(key));
  }

  put(key: string, body: Body, cond?: PutCondition): Promise<string> {
    return this.run('put', key, cond, () => this.inner.put(key, body, cond));
  }

  delete(key: string, opts?: { ifMatch?: string }): Promise<void> {
    const cond = opts?.ifMatch !== undefined ? { ifMatch: opts.ifMatch } : undefined;
    return this.run('delete', key, cond, () => this.inner.delete(key, opts));
  }

  deleteMany(keys: readonly string[]): Promise<void> {
    return this.run('deleteMany', keys, undefined, () => this.inner.deleteMany(keys));
  }

  list(prefix: string): Promise<ObjectInfo[]> {
    return this.run('list', prefix, undefined, () => this.inner.list(prefix));
  }

  /** Passed through list, so a rule on `list` fires for key-only listings too. */
  async listKeys(prefix: string): Promise<string[]> {
    return (await this.list(prefix)).map((o) => o.key);
  }

  /** A get per key, so a rule on `get` of any of the keys fires as it would for single reads. */
  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>> {
    return getEach(this, keys);
  }

  copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void> {
    return this.run('copy', dst, cond, () => this.inner.copy(src, dst, cond));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private pick(method: BackendMethod, keys: readonly string[]): ArmedRule | undefined {
    for (const r of this.rules) {
      if (r.method !== '*' && r.method !== method) continue;
      if (!keys.some((k) => keyMatches(r.key, k))) continue;
      if (r.times !== undefined && r.fired >= r.times) continue;
      if (r.skipped < (r.skip ?? 0)) {
        r.skipped++;
        continue;
      }
      r.fired++;
      return r;
    }
    return undefined;
  }

  private async run<T>(
    method: BackendMethod,
    target: string | readonly string[],
    cond: PutCondition | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    const keys = typeof target === 'string' ? [target] : target;
    const rule = this.pick(method, keys.length > 0 ? keys : ['']);
    if (rule === undefined) return call();
    const key = keys.join(',');
    const phase = rule.phase ?? 'before';
    this.fired.push({ method, key, fault: rule.fault, phase });
    const fault = rule.fault;
    if ('delayMs' in fault) {
      await sleep(fault.delayMs);
      return call();
    }
    if (phase === 'after') await call();
    if ('timeout' in fault) await sleep(fault.afterMs ?? 0);
    throw faultError(method, key, fault, cond);
  }
}

/** Wraps a backend with fault rules (see FaultRule). */
export function faultBackend(inner: Backend, rules: readonly FaultRule[] = []): FaultBackend {
  return new FaultBackend(inner, rules);
}

/** A backend that forwards everything and counts calls per method. */
export interface CountingBackend extends Backend {
  /** Calls per method since creation or the last reset. */
  readonly counts: Readonly<Record<BackendMethod, number>>;
  /** Every call, in order, as `method key`. */
  readonly calls: readonly string[];
  /** Calls across all methods. */
  total(): number;
  /** Zeroes the counts and forgets the calls. */
  reset(): void;
}

/** Wraps a backend to count the requests made through it, per method. */
export function countingBackend(inner: Backend): CountingBackend {
  const zero = (): Record<BackendMethod, number> =>
    Object.fromEntries(BACKEND_METHODS.map((m) => [m, 0])) as Record<BackendMethod, number>;
  let counts = zero();
  let calls: string[] = [];
  const count = (method: BackendMethod, key: string) => {
    counts[method]++;
    calls.push(`${method} ${key}`);
  };
  return {
    get name() {
      return inner.name;
    },
    get capabilities() {
      return inner.capabilities;
    },
    get counts() {
      return counts;
    },
    get calls() {
      return calls;
    },
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    reset: () => {
      counts = zero();
      calls = [];
    },
    get: (key) => (count('get', key), inner.get(key)),
    getStream: (key) => (count('getStream', key), inner.getStream(key)),
    getToFile: (key, path) => (count('getToFile', key), inner.getToFile(key, path)),
    stat: (key) => (count('stat', key), inner.stat(key)),
    put: (key, body, cond) => (count('put', key), inner.put(key, body, cond)),
    delete: (key, opts) => (count('delete', key), inner.delete(key, opts)),
    deleteMany: (keys) => (count('deleteMany', keys.join(',')), inner.deleteMany(keys)),
    list: (prefix) => (count('list', prefix), inner.list(prefix)),
    listKeys: (prefix) => (count('list', prefix), inner.listKeys(prefix)),
    getMany: (keys) => {
      for (const key of keys) count('get', key);
      return inner.getMany(keys);
    },
    copy: (src, dst, cond) => (count('copy', `${src} -> ${dst}`), inner.copy(src, dst, cond)),
    close: () => inner.close(),
  };
}
