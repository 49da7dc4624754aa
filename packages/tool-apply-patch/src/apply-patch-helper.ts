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

async function main(): Promise<void> {
  // This process serves one patch at a time and nothing else: blocking file calls stall no one
  // and cost one system call each (the walk and its guarantees are the same as asynchronous).
  useWorkspaceIo('sync');
  // Room for the largest patch the default limits allow, plus its header.
  const reader = new FrameReader(DEFAULT_PATCH_LIMITS.maxPatchBytes * 4 + 1024 * 1024);
  let plan: PatchPlan | undefined;
  /** Remembers the turn's baselines once the verified patch is written (nothing when it is not). */
  let remember: (() => void) | undefined;
  const turns = new HelperTurns();
  let state: 'waiting' | 'verified' | 'committing' | 'done' = 'waiting';

  /** Answers and waits for the next patch. */
  const answer = async (header: Record<string, unknown>, blobs: Buffer[] = []) => {
    plan = undefined;
    remember = undefined;
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
      const request = header as unknown as HelperApplyRequest;
      try {
        const text = (frame.blobs[0] ?? Buffer.alloc(0)).toString('utf8');
        if (request.turn?.seed !== undefined) turns.seed(String(request.turn.token), decodeSeed(request.turn.seed, frame.blobs));
        plan = await verifyPatch(text, { root: request.root, allowOutsideRoot: request.allowOutsideRoot, protectedNames: request.protectedNames, limits: request.limits });
      } catch (error) {
        await answer(errorFrame(error));
        return;
      }
      const turn = request.turn !== undefined ? turns.answer(String(request.turn.token), plan.files) : undefined;
      remember = turn?.commit;
      const { header: verified, blobs } = encodeVerified(plan, turn?.diffs);
      state = 'verified';
      await send(verified as unknown as Record<string, unknown>, blobs);
      return;
    }
    if (header.type === 'abort' && state === 'verified') {
      plan = undefined;
      remember = undefined;
      state = 'waiting';
      return;
    }
    if (header.type === 'commit' && state === 'verified' && plan) {
      state = 'committing';
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
