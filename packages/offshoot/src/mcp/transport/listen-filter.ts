/** What a 2026-07-28 `subscriptions/listen` stream asked for, as far as resources go. */
export interface ListenFilter {
  /** The resource URIs it wants `notifications/resources/updated` for. */
  resources: string[];
  /** True when it wants `notifications/resources/list_changed`. */
  listChanged: boolean;
}

/**
 * The id and filter of a `subscriptions/listen` request, or undefined for any other message. The SDK's serving
 * entries own the stream itself (acknowledgement, filtering, teardown); offshoot reads the filter only to know
 * which branches to watch and which URIs to announce. A malformed filter reads as an empty one: the entry refuses
 * the request anyway.
 */
export function listenRequest(message: unknown): { id: string | number; filter: ListenFilter } | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as { method?: unknown; id?: unknown; params?: { notifications?: unknown } };
  if (m.method !== 'subscriptions/listen' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return undefined;
  const n = (typeof m.params?.notifications === 'object' ? m.params.notifications : null) as {
    resourceSubscriptions?: unknown;
    resourcesListChanged?: unknown;
  } | null;
  const uris = Array.isArray(n?.resourceSubscriptions) ? n.resourceSubscriptions : [];
  return {
    id: m.id,
    filter: {
      resources: uris.filter((u): u is string => typeof u === 'string'),
      listChanged: n?.resourcesListChanged === true,
    },
  };
}
