import { isAbsolute, relative, resolve } from 'node:path';
import { RespondToModelError, toolName, type ToolInvocation, type ToolOutput } from '@switchyard/protocol';
import { contentItemsToText } from '@switchyard/kit/internal';

/** The warning the model reads when exec_command ran a patch. */

/** The answer to a bare patch given as the command. */
export const BARE_PATCH_MESSAGE = 'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]';

/** An `apply_patch` call found in a command: the patch text and the `cd` it runs under, if any. */
export interface ApplyPatchCommand {
  patch: string;
  cd?: string;
}

const CD_PREFIX = String.raw`(?:cd\s+(?<cd>'[^']*'|"[^"$\x60\\]*"|[^\s'"$\x60;&|<>]+)\s*&&\s*)?`;
const PROGRAM = String.raw`(?:apply_patch|applypatch)`;
const HEREDOC = new RegExp(
  String.raw`^\s*${CD_PREFIX}${PROGRAM}\s*<<\s*(?<quote>['"]?)(?<delimiter>[A-Za-z_][A-Za-z0-9_-]*)\k<quote>[ \t]*\r?\n(?<body>[\s\S]*?)\r?\n\k<delimiter>[ \t]*\s*$`,
);
const QUOTED_ARGUMENT = new RegExp(String.raw`^\s*${CD_PREFIX}${PROGRAM}\s+(?:'(?<single>[^']*)'|"(?<double>[^"$\x60\\]*)")\s*$`);

function unquote(word: string): string {
  return (word.startsWith("'") && word.endsWith("'")) || (word.startsWith('"') && word.endsWith('"')) ? word.slice(1, -1) : word;
}

/**
 * Recognizes `[cd <path> &&] apply_patch <<'EOF' … EOF` (any delimiter, quoted alike or bare) and
 * `[cd <path> &&] apply_patch '<patch>'`. Returns `undefined` for anything else.
 */
export function parseApplyPatchCommand(command: string): ApplyPatchCommand | undefined {
  const match = HEREDOC.exec(command) ?? QUOTED_ARGUMENT.exec(command);
  if (!match?.groups) return undefined;
  const patch = match.groups.body ?? match.groups.single ?? match.groups.double ?? '';
  if (patch.trim() === '') return undefined;
  return match.groups.cd ? { patch, cd: unquote(match.groups.cd) } : { patch };
}

/** True when the command is a patch itself (starts with `*** Begin Patch`) rather than a call to apply_patch. */
export function isBarePatch(command: string): boolean {
  return command.trimStart().startsWith('*** Begin Patch');
}

const PATH_HEADER = /^(\s*\*\*\* (?:Add File|Delete File|Update File|Move to): )(.+)$/;

/**
 * Rewrites the relative paths of a patch that was meant to run in `directory` so that the
 * apply_patch tool (which resolves against the workspace `root`) touches the same files.
 */
export function rebasePatchPaths(patch: string, directory: string, root: string): string {
  if (resolve(directory) === resolve(root)) return patch;
  return patch
    .split('\n')
    .map((line) => {
      const match = PATH_HEADER.exec(line);
      if (!match || isAbsolute(match[2].trim())) return line;
      const absolute = resolve(directory, match[2].trim());
      const inside = relative(root, absolute);
      return match[1] + (inside.startsWith('..') || isAbsolute(inside) ? absolute : inside);
    })
    .join('\n');
}

function textOf(output: ToolOutput, callId: string): string {
  const item = output.toResponseItem(callId, { kind: 'custom', input: '' });
  if (item.type === 'tool_search_output') return JSON.stringify(item.tools);
  return typeof item.output === 'string' ? item.output : contentItemsToText(item.output);
}

/**
 * An `apply_patch` heredoc run through exec_command in `cwd` goes to the apply_patch tool (when the
 * step has it): resolves with that tool's answer, or `undefined` when `command` is no such call or
 * the step has no apply_patch. As the reference: the apply_patch tool's own answer, no warning
 * line; a success goes inside the shell tool's `Wall time … Output:` frame (the caller's), a
 * failure is thrown as it is.
 */
export async function routeApplyPatch(invocation: ToolInvocation, command: string, cwd: string, root: string): Promise<string | undefined> {
  const parsed = parseApplyPatchCommand(command);
  const applyPatch = toolName('apply_patch');
  if (!parsed || !invocation.tools?.has(applyPatch)) return undefined;
  const directory = parsed.cd ? resolve(cwd, parsed.cd) : cwd;
  const patch = rebasePatchPaths(parsed.patch, directory, root);
  const output = await invocation.tools.call(applyPatch, { kind: 'custom', input: patch }, { signal: invocation.signal });
  const text = textOf(output, invocation.callId);
  if (output.success === false) throw new RespondToModelError(text);
  return text;
}
