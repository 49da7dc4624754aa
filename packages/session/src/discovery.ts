import type { DiscoveredTool, MessageItem, ToolDiscovery, ToolDiscoveryMode, ToolDiscoverySink } from '@switchyard/protocol';
import { truncateMiddle } from '@switchyard/kit';
import { codeBlock, estimateTokens, safeToolText } from '@switchyard/kit/internal';

// What this session's cells found with tools.tool_search, and how the model hears of it.

/** The opening line of a discovery message (also what a host finds it by in the history). */
export const DISCOVERY_HEADING = 'Nested tools found with `tools.tool_search`; they are on `tools` in every later `exec` cell:';

/**
 * One search's new tools as a developer message: per tool a heading with its name, its description
 * and its TypeScript declaration, up to `budgetTokens`; tools past it are named only (their
 * declarations are in `ALL_TOOLS`). The first tool is always described, its description cut in the
 * middle to fit the budget (and its declaration left to `ALL_TOOLS` when that alone exceeds it).
 * Tool texts come from plugins and MCP servers: a description's line terminators are normalised and
 * its fences escaped, the wrapper tags inside them are defused so a description cannot close the
 * block and speak as the developer, and each declaration's code fence is longer than any backtick
 * run inside it.
 */
export function discoveryMessage(tools: readonly DiscoveredTool[], budgetTokens: number): MessageItem {
  const sections: string[] = [];
  let used = estimateTokens(DISCOVERY_HEADING);
  let index = 0;
  for (; index < tools.length; index++) {
    const tool = tools[index];
    let section = toolSection(tool.name, tool.description, tool.declaration);
    let cost = estimateTokens(section) + 1;
    if (used + cost > budgetTokens) {
      if (sections.length > 0) break;
      section = firstToolSection(tool, budgetTokens - used);
      cost = estimateTokens(section) + 1;
    }
    sections.push(section);
    used += cost;
  }
  const rest = tools.slice(index).map((tool) => `\`${tool.name}\``);
  if (rest.length > 0) sections.push(`Also found (read their \`declaration\` in \`ALL_TOOLS\`): ${rest.join(', ')}.`);
  return { type: 'message', role: 'developer', content: `<tools_found>\n${DISCOVERY_HEADING}\n\n${sections.join('\n\n')}\n</tools_found>` };
}

/** The smallest room a first tool's description is cut to, however small the budget. */
const MIN_DESCRIPTION_TOKENS = 64;

function toolSection(name: string, description: string, declaration: string | undefined): string {
  const head = `### \`${name}\`\n${defuse(safeToolText(description))}`;
  if (declaration === undefined) return `${head}\n(declaration in \`ALL_TOOLS\`)`;
  return `${head}\n${codeBlock(defuse(declaration), 'ts')}`;
}

/** The first tool of a message that does not fit: the description cut to the room left, the declaration kept only if it fits too. */
function firstToolSection(tool: DiscoveredTool, room: number): string {
  const declarationTokens = estimateTokens(tool.declaration) + 8;
  const declaration = declarationTokens < room ? tool.declaration : undefined;
  const descriptionRoom = Math.max(MIN_DESCRIPTION_TOKENS, room - (declaration === undefined ? 16 : declarationTokens));
  return toolSection(tool.name, truncateMiddle(tool.description, descriptionRoom).text, declaration);
}

/** `<tools_found>` / `</tools_found>` in a tool's text become `&lt;tools_found>`: only the wrapper opens and closes the block. */
function defuse(text: string): string {
  return text.replace(/<(\s*\/?\s*tools_found)/gi, '&lt;$1');
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
