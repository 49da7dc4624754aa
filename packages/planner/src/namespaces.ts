import type { NamespaceToolSpec, ToolSpec } from '@switchyard/protocol';

type NamespaceMember = NamespaceToolSpec['tools'][number];

/** The description of a namespace whose own description is blank. */
export function defaultNamespaceDescription(name: string): string {
  return `Tools in the ${name} namespace.`;
}

function byName(a: NamespaceMember, b: NamespaceMember): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Merges same-named namespace specs into the position of the first one: later
 * members are appended, the first non-blank description wins, members are sorted by name (byte
 * order, stable), and a blank description becomes "Tools in the {name} namespace.". Other specs
 * keep their relative order. Pure: returns new namespace objects, never mutates its input.
 */
export function mergeNamespaces(specs: readonly ToolSpec[]): ToolSpec[] {
  const merged: ToolSpec[] = [];
  const namespaces = new Map<string, { index: number; description: string; tools: NamespaceMember[] }>();
  for (const spec of specs) {
    if (spec.type !== 'namespace') {
      merged.push(spec);
      continue;
    }
    const existing = namespaces.get(spec.name);
    if (existing) {
      if (existing.description.trim() === '' && spec.description.trim() !== '') existing.description = spec.description;
      existing.tools.push(...spec.tools);
      continue;
    }
    namespaces.set(spec.name, { index: merged.length, description: spec.description, tools: [...spec.tools] });
    merged.push(spec);
  }
  for (const [name, entry] of namespaces) {
    const namespace: NamespaceToolSpec = {
      type: 'namespace',
      name,
      description: entry.description.trim() === '' ? defaultNamespaceDescription(name) : entry.description,
      tools: entry.tools.sort(byName),
    };
    merged[entry.index] = namespace;
  }
  return merged;
}
