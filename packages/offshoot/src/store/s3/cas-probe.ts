import { createHash, randomBytes } from 'node:crypto';
import { fail, hasCode } from '../../core/errors.js';
import type { Backend } from '../backend.js';

/** The probe's finding when a put naming the object's current ETag is refused (the caller may retry another form). */
export const CURRENT_ETAG_REFUSED = 'a put with the current If-Match ETag was refused';

/** What the probe learned beyond "conditional writes work" (which it requires). */
export interface CasProbeReport {
  /** DeleteObject with If-Match refused a stale ETag and kept the object. */
  conditionalDelete: boolean;
}

/**
 * The attach-time check that the endpoint really enforces conditional writes, on a fresh `probe/cas-<16 hex>`
 * key: create-only, repeated create-only (must fail, content unchanged), stale-ETag replace (must fail, content
 * unchanged), current-ETag replace (must succeed, content re-checked), then a stale-ETag delete (recorded, not
 * required) and a cleanup delete. An endpoint that accepts a write it should refuse is rejected with
 * UNSUPPORTED: offshoot's refs are only safe where compare-and-swap is enforced by the server.
 */
export async function casProbe(backend: Backend, where: string = backend.name): Promise<CasProbeReport> {
  const key = `probe/cas-${randomBytes(8).toString('hex')}`;
  // Each version differs, so no two share an ETag (S3 ETags are content hashes).
  const version = (step: string) =>
    Buffer.from(`offshoot cas probe ${key} ${step} ${randomBytes(8).toString('hex')}\n`);
  const unsupported = (step: string) =>
    fail('UNSUPPORTED', `S3 endpoint ${where} does not enforce conditional writes (${step})`, {
      hint: 'offshoot needs If-None-Match/If-Match on PUT (AWS S3, MinIO); GCS interop is not supported',
    });
  const expectContent = async (want: Buffer, step: string) => {
    const got = await backend.get(key).catch((err: unknown) => {
      if (hasCode(err, 'NOT_FOUND')) return undefined;
      throw err;
    });
    if (got === undefined || !got.body.equals(want)) throw unsupported(step);
    return got;
  };
  const refused = async (attempt: Promise<unknown>, step: string) => {
    try {
      await attempt;
    } catch (err) {
      if (hasCode(err, 'ALREADY_EXISTS') || hasCode(err, 'CAS_CONFLICT')) return;
      if (hasCode(err, 'UNSUPPORTED')) throw unsupported(`${step}: ${(err as Error).message}`);
      throw err;
    }
    throw unsupported(step);
  };

  const first = version('create');
  let report: CasProbeReport;
  try {
    report = await runSteps();
  } catch (err) {
    // The probe failed already; a failing cleanup must not hide why.
    await backend.delete(key).catch(() => undefined);
    throw err;
  }
  await backend.delete(key);
  return report;

  async function runSteps(): Promise<CasProbeReport> {
    let etag: string;
    try {
      etag = await backend.put(key, first, { ifNoneMatch: true });
    } catch (err) {
      if (hasCode(err, 'UNSUPPORTED')) throw unsupported(`a create-only put was rejected: ${(err as Error).message}`);
      throw err;
    }
    await refused(
      backend.put(key, version('recreate'), { ifNoneMatch: true }),
      'a repeated create-only put was accepted',
    );
    await expectContent(first, 'a refused create-only put changed the object');

    const stale = `"${createHash('md5').update(version('stale')).digest('hex')}"`;
    await refused(
      backend.put(key, version('stale-replace'), { ifMatch: stale }),
      'a put with a stale If-Match ETag was accepted',
    );
    await expectContent(first, 'a refused If-Match put changed the object');

    const second = version('replace');
    try {
      etag = await backend.put(key, second, { ifMatch: etag });
    } catch (err) {
      if (hasCode(err, 'CAS_CONFLICT')) throw unsupported(CURRENT_ETAG_REFUSED);
      throw err;
    }
    await expectContent(second, 'a put with the current If-Match ETag did not replace the object');

    let conditionalDelete = false;
    try {
      await backend.delete(key, { ifMatch: stale });
    } catch (err) {
      if (!hasCode(err, 'CAS_CONFLICT')) throw err;
      conditionalDelete = (await backend.stat(key))?.etag === etag;
    }
    return { conditionalDelete };
  }
}
