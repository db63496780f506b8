// The page's only way to the server: GET requests to the JSON API (the token travels in an HttpOnly cookie).
import type { ApiError } from '../../src/ui/api-types.js';

/** An API error with the server's code and hint. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiError | undefined,
  ) {
    super(body?.error ?? `HTTP ${status}`);
  }
}

/** GETs a JSON document from the API. */
export async function get<T>(path: string): Promise<T> {
  const res = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'same-origin' });
  if (!res.ok) {
    let body: ApiError | undefined;
    try {
      body = (await res.json()) as ApiError;
    } catch {
      body = undefined;
    }
    throw new ApiFailure(res.status, body);
  }
  return (await res.json()) as T;
}

/** Path segment encoding for names in API URLs. */
export function seg(name: string): string {
  return encodeURIComponent(name);
}
