import { isAbsolute, relative, resolve } from 'node:path';

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
