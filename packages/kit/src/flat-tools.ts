import { codeModeName, type JsonObject, type WireTool, toolName } from '@switchyard/protocol';

/**
 * One callable entry of a request's tool table under a flat name, for model APIs that have no
 * namespaces (Chat Completions, the AI SDK's providers). Produced by {@link flattenWireTools}.
 */
export interface FlatWireTool {
  /** The Code Mode name (`clock` + `curr_time` → `clock__curr_time`), a valid JS identifier; unique in the table. */
  readonly flatName: string;
  /** `function` for function specs, `custom` for freeform specs (namespace members included). */
  readonly kind: 'function' | 'custom';
  /** The spec's own name, without namespace. */
  readonly name: string;
  /** The namespace of a namespace member; absent for top-level specs. */
  readonly namespace?: string;
  /** The function or custom spec as wire JSON (a namespace member's own entry). */
  readonly spec: JsonObject;
}

/**
 * Flattens a request's wire tools (in order): functions and custom tools as they are, namespace
 * members under their Code Mode names; `tool_search` and hosted specs are left out (they have no
 * flat form). The first tool of a flat name wins. Pure; never throws.
 */
export function flattenWireTools(tools: readonly WireTool[]): FlatWireTool[] {
  const out: FlatWireTool[] = [];
  const taken = new Set<string>();
  const add = (entry: FlatWireTool) => {
    if (taken.has(entry.flatName)) return;
    taken.add(entry.flatName);
    out.push(entry);
  };
  for (const tool of tools) {
    const record = tool as JsonObject & { type: string };
    if (record.type === 'function' || record.type === 'custom') {
      const name = String(record.name);
      add({ flatName: codeModeName(toolName(name)), kind: record.type, name, spec: record });
    } else if (record.type === 'namespace' && Array.isArray(record.tools)) {
      const namespace = String(record.name);
      for (const member of record.tools as JsonObject[]) {
        if (member.type !== 'function' && member.type !== 'custom') continue;
        const name = String(member.name);
        add({ flatName: codeModeName(toolName(name, namespace)), kind: member.type, name, namespace, spec: member });
      }
    }
  }
  return out;
}
