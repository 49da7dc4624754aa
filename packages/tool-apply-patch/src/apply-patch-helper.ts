/**
 * The apply_patch helper process: apply_patch runs it (inside the exec sandbox when one is set)
 * so that reading, matching, diffing and writing happen off the host's thread and, sandboxed,
 * under the kernel's confinement. One helper serves one session's patches one after another. It
 * speaks frames (see helper-frames.ts) on stdin/stdout, per patch:
 *
 *   host → helper   {type:"apply", root, …} + patch blob      verify only, write nothing
 *   helper → host   {type:"verified", …} + content blobs       or {type:"error", code, message}
 *   host → helper   {type:"commit"}                            or {type:"abort"}: nothing is written
 *   helper → host   {type:"committed"}                         or {type:"error", …}
 *
 * then waits for the next "apply". A message out of turn is answered with an error and the helper
 * exits; so does it when stdin closes (the host went away), never in the middle of a commit.
 */
import { isApplyPatchError } from './apply-patch-error';
import { FrameReader, encodeFrame, type Frame } from './helper-frames';
import { decodeSeed, encodeVerified, type HelperApplyRequest, type HelperError } from './helper-protocol';
import { HelperTurns } from './helper-turn';
import { DEFAULT_PATCH_LIMITS } from './limits';
import { verifyPatch, type PatchPlan } from './verify-patch';
import { useWorkspaceIo } from './workspace-io';

/** Writes one frame to stdout and resolves once it is flushed. */
function send(header: Record<string, unknown>, blobs: Buffer[] = []): Promise<void> {
  const parts = encodeFrame(header, blobs);
  return new Promise((resolve, reject) => {
    for (const [index, part] of parts.entries()) {
      if (index < parts.length - 1) process.stdout.write(part);
      else process.stdout.write(part, (error) => (error ? reject(error) : resolve()));
    }
  });
}

function errorFrame(error: unknown): HelperError {
  if (isApplyPatchError(error)) {
    return { type: 'error', code: error.code, message: error.message, ...(error.unrestoredPaths ? { unrestoredPaths: error.unrestoredPaths } : {}) };
  }
  return { type: 'error', code: 'HELPER_FAILED', message: `apply_patch helper failed: ${error instanceof Error ? error.message : String(error)}` };
}

/** A verified patch waiting for the host's decision, and what to remember of the turn once it is written. */
interface Pending {
  plan: PatchPlan;
  remember?: () => void;
}

/** Verifies an `apply` request (the patch is blob 0; a turn seed's texts follow it) and encodes the answer. */
async function verifyRequest(frame: Frame, turns: HelperTurns): Promise<{ pending: Pending; header: Record<string, unknown>; blobs: Buffer[] }> {
  const request = frame.header as unknown as HelperApplyRequest;
  const text = (frame.blobs[0] ?? Buffer.alloc(0)).toString('utf8');
  if (request.turn?.seed !== undefined) turns.seed(String(request.turn.token), decodeSeed(request.turn.seed, frame.blobs));
  const plan = await verifyPatch(text, { root: request.root, allowOutsideRoot: request.allowOutsideRoot, protectedNames: request.protectedNames, limits: request.limits });
  const turn = request.turn !== undefined ? turns.answer(String(request.turn.token), plan.files) : undefined;
  const { header, blobs } = encodeVerified(plan, turn?.diffs);
  return { pending: { plan, ...(turn ? { remember: turn.commit } : {}) }, header: header as unknown as Record<string, unknown>, blobs };
}

async function main(): Promise<void> {
  // This process serves one patch at a time and nothing else: blocking file calls stall no one
  // and cost one system call each (the walk and its guarantees are the same as asynchronous).
  useWorkspaceIo('sync');
  // Room for the largest patch the default limits allow, plus its header.
  const reader = new FrameReader(DEFAULT_PATCH_LIMITS.maxPatchBytes * 4 + 1024 * 1024);
  let pending: Pending | undefined;
  const turns = new HelperTurns();
  let state: 'waiting' | 'verified' | 'committing' | 'done' = 'waiting';

  /** Answers and waits for the next patch. */
  const answer = async (header: Record<string, unknown>, blobs: Buffer[] = []) => {
    pending = undefined;
    state = 'waiting';
    await send(header, blobs).catch(() => undefined);
  };
  const quit = async (header: Record<string, unknown>) => {
    state = 'done';
    await send(header).catch(() => undefined);
    process.exit(0);
  };

  const onFrame = async (frame: Frame) => {
    const header = frame.header;
    if (header.type === 'apply' && state === 'waiting') {
      let verified;
      try {
        verified = await verifyRequest(frame, turns);
      } catch (error) {
        await answer(errorFrame(error));
        return;
      }
      pending = verified.pending;
      state = 'verified';
      await send(verified.header, verified.blobs);
      return;
    }
    if (header.type === 'abort' && state === 'verified') {
      pending = undefined;
      state = 'waiting';
      return;
    }
    if (header.type === 'commit' && state === 'verified' && pending) {
      state = 'committing';
      const { plan, remember } = pending;
      try {
        await plan.commit();
      } catch (error) {
        await answer(errorFrame(error));
        return;
      }
      remember?.();
      await answer({ type: 'committed' });
      return;
    }
    await quit({ type: 'error', code: 'HELPER_FAILED', message: `apply_patch helper got an unexpected ${String(header.type)} message` });
  };

  let queue = Promise.resolve();
  process.stdin.on('data', (chunk: Buffer) => {
    let frames: Frame[];
    try {
      frames = reader.push(chunk);
    } catch (error) {
      void quit(errorFrame(error));
      return;
    }
    for (const frame of frames) queue = queue.then(() => onFrame(frame));
  });
  // The host went away: leave once any commit in progress is done, without writing anything new.
  process.stdin.on('end', () => {
    void queue.then(() => process.exit(0));
  });
}

void main();
