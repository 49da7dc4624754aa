/**
 * A small typed event hub whose listeners are guarded: `emit` calls every listener in subscription
 * order; one that throws never reaches the emitter (the turn, the tool call, the cell) nor the
 * listeners after it, and is never silently swallowed either — it is reported through the hub's
 * one channel, `onListenerError`, which by default is `process.emitWarning` with type
 * `SwitchyardWarning` and code `SWITCHYARD_LISTENER` (each distinct message once per process).
 *
 * Written by hand rather than wrapping `eventemitter3`: the guard and the report are the point, the
 * rest is a map of sets, and this file has no imports so it can sit in the lowest package.
 */

/** What a hub reports when a listener throws. */
export interface ListenerErrorReport {
  /** The hub's name (e.g. `session`, `router`, `hooks`). */
  readonly hub: string;
  /** The type of the event being delivered. */
  readonly type: string;
  /** What the listener threw. */
  readonly error: unknown;
}

export interface EventHubOptions {
  /** Names the hub in reports: `a <hub> listener for "<type>" threw: <message>`. */
  name: string;
  /**
   * Receives every listener failure instead of the default warning. Must not throw (if it does,
   * that is dropped: there is no channel left to report it through).
   */
  onListenerError?: (report: ListenerErrorReport) => void;
}

/** An event hub over a union of events discriminated by `type`. */
export interface EventHub<E extends { readonly type: string }> {
  /** Subscribes to one event type; returns the unsubscribe function. Subscribing twice delivers twice. */
  on<T extends E['type']>(type: T, listener: (event: Extract<E, { type: T }>) => void): () => void;
  /** Subscribes to every event; returns the unsubscribe function. */
  onAny(listener: (event: E) => void): () => void;
  /** Delivers `event` to the listeners subscribed when it starts (type listeners, then any-listeners). Never throws. */
  emit(event: E): void;
  /** Listeners currently subscribed to `type` plus the any-listeners. */
  listenerCount(type: E['type']): number;
}

const reported = new Set<string>();
const MAX_REPORTED = 1_000;

/** The default channel: `process.emitWarning` once per distinct message (bounded), never throwing. */
export function warnListenerError(report: ListenerErrorReport): void {
  const message = `a ${report.hub} listener for "${report.type}" threw: ${report.error instanceof Error ? report.error.message : String(report.error)}`;
  if (reported.has(message) || reported.size >= MAX_REPORTED) return;
  reported.add(message);
  try {
    (globalThis as { process?: { emitWarning?: (message: string, options: { type: string; code: string }) => void } }).process?.emitWarning?.(message, {
      type: 'SwitchyardWarning',
      code: 'SWITCHYARD_LISTENER',
    });
  } catch {
    // a broken warning listener has nowhere left to be reported
  }
}

/** Creates an event hub (see the file's comment for the guard and the report channel). */
export function createEventHub<E extends { readonly type: string }>(options: EventHubOptions): EventHub<E> {
  const byType = new Map<string, Set<{ listener: (event: E) => void }>>();
  const any = new Set<{ listener: (event: E) => void }>();
  const report = options.onListenerError ?? warnListenerError;
  const subscribe = (set: Set<{ listener: (event: E) => void }>, listener: (event: E) => void) => {
    const entry = { listener };
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  };
  const deliver = (entry: { listener: (event: E) => void }, event: E) => {
    try {
      entry.listener(event);
    } catch (error) {
      try {
        report({ hub: options.name, type: event.type, error });
      } catch {
        // the report channel itself failed: nothing is left to tell
      }
    }
  };
  return {
    on(type, listener) {
      let set = byType.get(type);
      if (!set) byType.set(type, (set = new Set()));
      return subscribe(set, listener as (event: E) => void);
    },
    onAny: (listener) => subscribe(any, listener),
    emit(event) {
      for (const entry of [...(byType.get(event.type) ?? []), ...any]) deliver(entry, event);
    },
    listenerCount: (type) => (byType.get(type)?.size ?? 0) + any.size,
  };
}
