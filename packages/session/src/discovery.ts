import type { DiscoveredTool, MessageItem, ToolDiscovery, ToolDiscoveryMode, ToolDiscoverySink } from '@switchyard/protocol';
import { estimateTokens } from '@switchyard/kit';

// What this session's cells found with tools.tool_search, and how the model hears of it.

/** The opening line of a discovery message (also what a host finds it by in the history). */
export const DISCOVERY_HEADING = 'Nested tools found with `tools.tool_search`; they are on `tools` in every later `exec` cell:';

/**
 * One search's new tools as a developer message: per tool a heading with its name, its description
 * and its TypeScript declaration, up to `budgetTokens` (the first tool always); tools past it are
 * named only (their declarations are in `ALL_TOOLS`).
 */
export function discoveryMessage(tools: readonly DiscoveredTool[], budgetTokens: number): MessageItem {
  const sections: string[] = [];
  let used = estimateTokens(DISCOVERY_HEADING);
  let index = 0;
  for (; index < tools.length; index++) {
    const tool = tools[index];
    const section = `### \`${tool.name}\`\n${tool.description}\n\`\`\`ts\n${tool.declaration}\n\`\`\``;
    const cost = estimateTokens(section) + 1;
    if (sections.length > 0 && used + cost > budgetTokens) break;
    sections.push(section);
    used += cost;
  }
  const rest = tools.slice(index).map((tool) => `\`${tool.name}\``);
  if (rest.length > 0) sections.push(`Also found (read their \`declaration\` in \`ALL_TOOLS\`): ${rest.join(', ')}.`);
  return { type: 'message', role: 'developer', content: `<tools_found>\n${DISCOVERY_HEADING}\n\n${sections.join('\n\n')}\n</tools_found>` };
}

/**
 * The session's record of discoveries, shared by every step (the `toolDiscovery` of each step's
 * context). In `tools` mode the found tools' names go to every later plan; in `conversation` mode
 * the plan never hears of them and each search's new tools become one developer message for the
 * next request. A tool is told about once per session.
 */
export class SessionDiscovery {
  private readonly found = new Map<string, DiscoveredTool>();
  private readonly pending: MessageItem[] = [];
  /** The sink every step's context carries. */
  readonly sink: ToolDiscoverySink;

  constructor(
    readonly mode: ToolDiscoveryMode,
    private readonly budgetTokens: number,
  ) {
    this.sink = { found: (discovery) => this.record(discovery) };
  }

  private record(discovery: ToolDiscovery): void {
    const fresh = discovery.tools.filter((tool) => !this.found.has(tool.toolName));
    for (const tool of fresh) this.found.set(tool.toolName, tool);
    if (this.mode === 'conversation' && fresh.length > 0) this.pending.push(discoveryMessage(fresh, this.budgetTokens));
  }

  /** What later plans describe (`tools` mode): the display names found so far, in order; `undefined` in `conversation` mode. */
  planned(): readonly string[] | undefined {
    return this.mode === 'tools' && this.found.size > 0 ? [...this.found.keys()] : undefined;
  }

  /** The discovery messages waiting for the next request (`conversation` mode). */
  take(): MessageItem[] {
    return this.pending.splice(0, this.pending.length);
  }
}
