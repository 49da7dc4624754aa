import type { BackgroundCompletion, BackgroundDelivery, ResponseItem, ToolOutputItem } from '@switchyard/protocol';

/** `createSession({ background })`: completions of work that outlived its call reach the model on their own. */
export interface SessionBackgroundOptions {
  /**
   * The most a Code Mode cell may run unobserved (ms: from when the last `exec` / `wait` left it
   * running) before it is terminated; its delivered output then says so. Default: no bound (a
   * cell runs until it ends, is terminated, or the session shuts down).
   */
  maxUnobservedMs?: number;
  /**
   * Wake turns (`session.wake()`) in a row without a turn of the host: past it the session stops
   * waking itself, emits a `warning` (`source: 'background'`) once, and leaves the completions for
   * the host's next turn, which re-arms it (as does calling `wake()` again). With `maxSteps` it
   * bounds the model requests made without host input. Default 8; 0 never wakes.
   */
  maxWakeTurns?: number;
}

/** Default of `maxWakeTurns`. */
export const DEFAULT_MAX_WAKE_TURNS = 8;

/**
 * `background-complete`: a yielded cell or a process started by `exec_command` ended while no call
 * of the model observed it; its final output is queued for the model's next request (once).
 */
export interface BackgroundCompleteEvent {
  readonly type: 'background-complete';
  /** The model's call that started the work (`exec` or `exec_command`). */
  readonly callId: string;
  /** The cell, for a Code Mode cell. */
  readonly cellId?: string;
  /** The process id `exec_command` answered with, for a process. */
  readonly processId?: number;
  /** `completed`, `failed` (script error, non-zero exit code) or `terminated`. */
  readonly status: BackgroundCompletion['status'];
  /** The output item queued for the next request: what the model will read (a front end shows it). */
  readonly item: ToolOutputItem;
}

/**
 * The session's inbox of background completions: tools deliver through `delivery` (the
 * `StepContext.background` of every step), the next request takes the items. Closing it stops
 * every watcher and drops later deliveries.
 */
export class BackgroundInbox {
  private readonly controller = new AbortController();
  private readonly items: ResponseItem[] = [];
  readonly delivery: BackgroundDelivery;

  constructor(options: SessionBackgroundOptions, onComplete: (event: BackgroundCompleteEvent) => void) {
    const signal = this.controller.signal;
    this.delivery = {
      maxUnobservedMs: options.maxUnobservedMs,
      signal,
      complete: (completion) => {
        if (signal.aborted) return;
        this.items.push(completion.item);
        const { callId, cellId, processId, status, item } = completion;
        onComplete({ type: 'background-complete', callId, ...(cellId !== undefined ? { cellId } : {}), ...(processId !== undefined ? { processId } : {}), status, item });
      },
    };
  }

  /** Aborted when the session shuts down. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Completions not yet taken into a request. */
  get pending(): number {
    return this.items.length;
  }

  /** The delivered items not yet taken (copies the list; a store records them). */
  peek(): ResponseItem[] {
    return [...this.items];
  }

  /** The delivered items, in delivery order; each is handed out once. */
  take(): ResponseItem[] {
    return this.items.splice(0);
  }

  close(): void {
    this.controller.abort();
  }
}

/** The `background` option as the session uses it (`true` means the defaults). */
export function backgroundSettings(option: boolean | SessionBackgroundOptions | undefined): SessionBackgroundOptions | undefined {
  if (option === undefined || option === false) return undefined;
  return option === true ? {} : option;
}
