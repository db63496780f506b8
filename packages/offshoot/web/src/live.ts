// Live updates: the page follows /api/events (SSE) and refreshes the view on each daemon event (`data:` frames) and
// on each `refs` frame, which the server sends when any branch changes by any hand.
import type { ApiEvent } from '../../src/ui/api-types.js';

/** Follows the event stream; calls onEvent per event and onState when the connection opens or drops. */
export function follow(onEvent: (ev: ApiEvent) => void, onState: (connected: boolean) => void): () => void {
  const es = new EventSource('/api/events', { withCredentials: true });
  es.onopen = () => onState(true);
  es.onerror = () => onState(false);
  es.addEventListener('refs', () => onEvent({ v: 1, ts: new Date().toISOString(), type: 'refs_changed' }));
  es.onmessage = (m: MessageEvent<string>) => {
    try {
      onEvent(JSON.parse(m.data) as ApiEvent);
    } catch {
      // A frame that is not JSON is not an event.
    }
  };
  return () => es.close();
}
