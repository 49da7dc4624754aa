import {
  DEFAULT_HOOK_INPUT_BOUNDS,
  toolName,
  toWireTools,
  type JsonBounds,
  type HookRunner,
  type ResponseItem,
  type SwitchyardEvent,
  type SwitchyardEventListener,
  type SwitchyardEventType,
  type ToolCall,
  type ToolSpec,
  type WireTool,
} from '@switchyard/protocol';
import { createEventHub } from '@switchyard/kit/internal';
import { buildToolCall } from './build-tool-call';
import type { ToolRegistry } from './tool-registry';

/** Options of {@link createToolRouter}. */
export interface ToolRouterOptions {
  /** The model-visible specs of the step (the planner's `modelVisibleSpecs`), in request order. */
  specs: readonly ToolSpec[];
  /** The executors of the step. */
  registry: ToolRegistry;
  /** Pre/post hooks run around every call that has a hook payload. Absent: no hooks. */
  hooks?: HookRunner;
  /**
   * How deep and large a hook input (and a PostToolUse response) may be. A call past them is
   * refused with `INVALID_INPUT` before its handler (a response past them is withheld), so nothing
   * runs without its hooks. Default 100 levels and 16 Mi characters; only applies with `hooks`.
   */
  hookInputBounds?: JsonBounds;
}

/**
 * One step's routing table: what the model sees (`specs`, `tools`), what the host runs
 * (`registry`), the hook runner, and the lifecycle events of every call routed through it.
 */
export interface ToolRouter {
  readonly specs: readonly ToolSpec[];
  /** `specs` as Responses-API JSON (the request's `tools`). */
  readonly tools: readonly WireTool[];
  readonly registry: ToolRegistry;
  readonly hooks: HookRunner | undefined;
  /** The bounds of hook inputs (see {@link ToolRouterOptions.hookInputBounds}). */
  readonly hookInputBounds: JsonBounds;
  /** Wire item → tool call; `undefined` when the item is not a tool call (see {@link buildToolCall}). */
  buildToolCall(item: ResponseItem): ToolCall | undefined;
  /** Subscribes to one event type; returns the unsubscribe function. A throwing listener is reported as a `SWITCHYARD_LISTENER` process warning and never reaches the call. */
  on<T extends SwitchyardEventType>(type: T, listener: SwitchyardEventListener<T>): () => void;
  /** Emits an event to this router's listeners (the runtime and executors' `invocation.emit` use it). */
  emit(event: SwitchyardEvent): void;
}

/** Creates the router of one step. Pure apart from its event hub; never throws. */
export function createToolRouter(options: ToolRouterOptions): ToolRouter {
  // a throwing listener is reported (process warning SWITCHYARD_LISTENER) and never reaches the call
  const events = createEventHub<SwitchyardEvent>({ name: 'router' });
  const specs = Object.freeze([...options.specs]);
  const tools = Object.freeze(toWireTools(specs));
  return {
    specs,
    tools,
    registry: options.registry,
    hooks: options.hooks,
    hookInputBounds: options.hookInputBounds ?? DEFAULT_HOOK_INPUT_BOUNDS,
    buildToolCall(item) {
      const call = buildToolCall(item);
      // A deferred top-level function loaded by the provider's own (hosted) tool_search comes back
      // with `namespace` set to its name; it is the plain tool when no such namespace is registered.
      const name = call?.toolName;
      if (call && name?.namespace === name?.name && !options.registry.has(name!) && options.registry.has(toolName(name!.name))) {
        return { ...call, toolName: toolName(name!.name) };
      }
      return call;
    },
    on: (type, listener) => events.on(type, listener),
    emit: (event) => events.emit(event),
  };
}
