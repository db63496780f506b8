import type { Readable } from 'node:stream';

/**
 * What a put may carry: bytes in memory, or a file streamed from disk (large snapshots). `handOver` says the file is
 * complete and never written again, so a local store may link it into place rather than copy it (its name stays the
 * caller's to remove).
 */
export type Body = Uint8Array | { file: string; handOver?: true };

/** A put's precondition: create-only, or replace only the version with this etag. */
export type PutCondition = { ifNoneMatch: true } | { ifMatch: string };

/** A key and its object's text. */
export interface KeyText {
  key: string;
  text: string;
}

/** One listed object. */
export interface ObjectInfo {
  key: string;
  size: number;
  etag?: string;
}

/** An object read whole. A backend may compute etag only when it is first read (the local one hashes the body). */
export interface GetResult {
  body: Buffer;
  readonly etag: string;
}

/** One small object a group create writes. */
export interface NewObject {
  key: string;
  body: Uint8Array;
}

/** What a group create did: the keys it created (each durable), and the first failure that stopped it, if any. */
export interface GroupCreateResult {
  created: string[];
  failed?: { key: string; error: unknown };
}

/** What a backend can do beyond the common contract. */
export interface BackendCapabilities {
  /** Delete-if-etag-matches is enforced by the backend itself. */
  conditionalDelete: boolean;
  /** Server-side copy or a filesystem clone makes copy O(1) in transferred bytes. */
  cheapCopy: boolean;
}

/**
 * The object store contract every backend meets (local directory, S3). Keys are `/`-separated. Errors are
 * OffshootErrors: NOT_FOUND for a missing key, ALREADY_EXISTS when a create-only put finds the key, CAS_CONFLICT
 * when an if-match put or delete finds another version.
 */
export interface Backend {
  /** A description for messages, e.g. the store spec. */
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  /** Reads an object whole. */
  get(key: string): Promise<GetResult>;
  /** Opens an object for streaming reads (large snapshots are never held in memory). */
  getStream(key: string): Promise<Readable>;
  /** Streams an object to a local file (atomically: temp then rename), returning its size. */
  getToFile(key: string, path: string): Promise<number>;
  /** Size and etag, or undefined when the key is absent. */
  stat(key: string): Promise<ObjectInfo | undefined>;
  /** Writes an object, optionally create-only or compare-and-swap; returns the new etag. */
  put(key: string, body: Body, cond?: PutCondition): Promise<string>;
  /** Deletes a key; deleting a missing key succeeds. With ifMatch, only that version is deleted. */
  delete(key: string, opts?: { ifMatch?: string }): Promise<void>;
  /** Deletes many keys, missing ones included; batched where the backend allows. */
  deleteMany(keys: readonly string[]): Promise<void>;
  /** Every key starting with prefix, sorted by key (byte order). */
  list(prefix: string): Promise<ObjectInfo[]>;
  /**
   * Creates small objects create-only in tiers: every object of a tier is visible before any object of the next tier,
   * so a reader never sees a later object without the earlier ones it names, and every object created is durable when
   * the call returns. Durability is not ordered by tier: a crash before the call returns may leave a later tier's
   * object without an earlier one's, a state the caller must read as an unfinished group (Store.createForkRefs: a
   * torn fork). A failure ends the call after its tier (later tiers are not written); objects it already created are
   * durable, reported, never removed. Optional: createInTiers (store/group-create.ts) falls back to one create-only
   * put each, tier by tier, each durable before the next tier starts.
   */
  createInTiers?(tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult>;
  /** The keys list would give, without sizes: what a caller that needs no size asks (a local listing stats nothing). */
  listKeys(prefix: string): Promise<string[]>;
  /**
   * Reads many small objects (refs, base pointers) whole, answering in the order of keys, undefined for a key that
   * does not exist; each etag is what get would give, computed where the backend must only when a caller reads it.
   */
  getMany(keys: readonly string[]): Promise<Array<GetResult | undefined>>;
  /**
   * getMany's bodies as UTF-8 text and nothing else (no etag, so nothing to hash or keep): what a listing reads when it
   * writes nothing back. Optional: Store.refTexts falls back to getMany where a backend has no cheaper way.
   */
  getManyText?(keys: readonly string[]): Promise<Array<string | undefined>>;
  /**
   * Every key under prefix with its text, in byte order, as listKeys and getManyText would give them, served from
   * indexFile (a cache file outside the store) while the backend can prove nothing under prefix has changed since it
   * was written; a text that fails `indexable` keeps the listing out of the index. Optional: only a backend that can
   * prove that without reading the objects has it.
   */
  listTexts?(prefix: string, indexFile: string, indexable: (text: string) => boolean): Promise<KeyText[]>;
  /**
   * The segments directly under prefix (which ends in `/`) that have keys below them, in no order, without listing
   * those keys. Optional: a backend with listTexts has it, so a whole listing can be read one indexed part at a time.
   */
  listChildren?(prefix: string): Promise<string[]>;
  /**
   * Removes what writers that died left behind, untouched since before `before`: the `.tmp-*` files beside objects
   * (local), the incomplete multipart uploads (S3). Under prefix (ending in `/`), or, for `''`, of the keys directly at
   * the top only. Returns how many were removed. Optional: a backend whose writes leave nothing behind has none.
   */
  sweepAbandoned?(prefix: string, before: Date): Promise<number>;
  /** Copies src to dst without the data passing through the caller where the backend can. */
  copy(src: string, dst: string, cond?: { ifNoneMatch: true }): Promise<void>;
  /** Releases connections and handles. */
  close(): Promise<void>;
}
