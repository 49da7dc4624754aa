import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepContext, SwitchyardEvent, ToolPayload } from '@switchyard/protocol';
import { invokeTool } from '@switchyard/registry/testing';
import { rejectionOf } from '@switchyard/test-helpers';
import type { ApplyPatchError } from './apply-patch-error';
import { applyPatchTool } from './apply-patch-tool';
import { applyPatch, type VerifyPatchOptions } from './verify-patch';

// What the apply_patch tests share. Not part of the package's entry.

/** A patch: `lines` between the Begin and End markers. */
export const wrap = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch'].join('\n');

/** A fresh folder under the system's temporary folder holding two empty folders, `workspace` (the root) and `outside`. */
export async function workspaceFolders(prefix: string): Promise<{ base: string; root: string; outside: string }> {
  const base = await mkdtemp(join(tmpdir(), prefix));
  const folders = { base, root: join(base, 'workspace'), outside: join(base, 'outside') };
  await mkdir(folders.root);
  await mkdir(folders.outside);
  return folders;
}

/** The freeform payload of an apply_patch call. */
export const custom = (input: string): ToolPayload => ({ kind: 'custom', input });

/**
 * One call (id `call-9`) through the registry. Resolves with the output; a failure rejects with the
 * model-visible error (its message is the text the model reads), so a test can name the exact answer.
 * The tool's own notifications are appended to `events`.
 */
export async function callPatchTool(input: string, step: Partial<StepContext>, events: SwitchyardEvent[] = [], tool = applyPatchTool()) {
  const result = await invokeTool(tool, custom(input), { callId: 'call-9', step, hooks: false });
  events.push(...result.events.filter((event) => event.type === 'tool-notification'));
  if (result.error) throw result.error;
  return result.output;
}

/** The error `applyPatch` refuses `patch` with in `root`; throws when the patch applies. */
export function patchFailure(root: string, patch: string, options: Partial<VerifyPatchOptions> = {}): Promise<ApplyPatchError> {
  return rejectionOf<ApplyPatchError>(applyPatch(patch, { root, ...options }));
}
