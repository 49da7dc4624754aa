/**
 * The apply_patch helper process: apply_patch runs it (inside the exec sandbox when one is set)
 * so that reading, matching, diffing and writing happen off the host's thread and, sandboxed,
 * under the kernel's confinement. One helper serves one session's patches one after another. It
 * speaks the messages of `helper-messages.ts` (framed by `helper-frames.ts`) on stdin/stdout, per patch:
 *
 *   host → helper   {t:"apply", root, …} + patch blob      verify only, write nothing
 *   helper → host   {t:"verified", …} + content blobs       or {t:"error", code, message}
 *   host → helper   {t:"commit"}                            or {t:"abort"}: nothing is written
 *   helper → host   {t:"committed"}                         or {t:"error", …}
 *
 * then waits for the next "apply". A message out of turn is answered with an error and the helper
 * exits; so does it when stdin closes (the host went away), never in the middle of a commit.
 */
import { isApplyPatchError } from './apply-patch-error';
import { FrameReader, encodeFrame, type Frame } from './helper-frames';
import { FROM_HOST, type HelperToHost, type HostToHelper } from './helper-messages';
import { decodeSeed, encodeVerified } from './helper-protocol';
import { HelperTurns } from './helper-turn';
import { DEFAULT_PATCH_LIMITS } from './limits';
import { verifyPatch, type PatchPlan } from './verify-patch';
import { useWorkspaceIo } from './workspace-io';

/** Writes one frame to stdout and resolves once it is flushed. */
function send(message: HelperToHost, blobs: Buffer[] = []): Promise<void> {
  const parts = encodeFrame(message, blobs);
  return new Promise((resolve, reject) => {
    for (const [index, part] of parts.entries()) {
      if (index < parts.length - 1) process.stdout.write(part);
      else process.stdout.write(part, (error) => (error ? reject(error) : resolve()));
    }
  });
}

function errorFrame(error: unknown): HelperToHost {
  if (isApplyPatchError(error)) {
    return { t: 'error', code: error.code, message: error.message, ...(error.unrestoredPaths ? { unrestoredPaths: [...error.unrestoredPaths] } : {}) };
  }
  return { t: 'error', code: 'HELPER_FAILED', message: `apply_patch helper failed: ${error instanceof Error ? error.message : String(error)}` };
}

/** A verified patch waiting for the host's decision, and what to remember of the turn once it is written. */
interface Pending {
  plan: PatchPlan;
  remember?: () => void;
}

type Apply = Extract<HostToHelper, { t: 'apply' }>;

/** Verifies an `apply` request (its patch and a turn seed's texts are blobs) and encodes the answer. */
async function verifyRequest(request: Apply, blobs: readonly Buffer[], turns: HelperTurns): Promise<{ pending: Pending; message: HelperToHost; blobs: Buffer[] }> {
  const text = blobs[request.patch].toString('utf8');
  if (request.turn?.seed !== undefined) turns.seed(request.turn.token, decodeSeed(request.turn.seed, blobs));
  const plan = await verifyPatch(text, { root: request.root, allowOutsideRoot: request.allowOutsideRoot, protectedNames: request.protectedNames, limits: request.limits });
  const turn = request.turn !== undefined ? turns.answer(request.turn.token, plan.files) : undefined;
  const answer = encodeVerified(plan, turn?.diffs);
  return { pending: { plan, ...(turn ? { remember: turn.commit } : {}) }, message: answer.message, blobs: answer.blobs };
}

async function main(): Promise<void> {
  // This process serves one patch at a time and nothing else: blocking file calls stall no one
  // and cost one system call each (the walk and its guarantees are the same as asynchronous).
  useWorkspaceIo('sync');
  // Room for the largest patch the default limits allow, plus its header.
  const reader = new FrameReader(FROM_HOST, DEFAULT_PATCH_LIMITS.maxPatchBytes * 4 + 1024 * 1024);
  let pending: Pending | undefined;
  const turns = new HelperTurns();
  let state: 'waiting' | 'verified' | 'committing' | 'done' = 'waiting';

  /** Answers and waits for the next patch. */
  const answer = async (message: HelperToHost, blobs: Buffer[] = []) => {
    pending = undefined;
    state = 'waiting';
    await send(message, blobs).catch(() => undefined);
  };
  const quit = async (message: HelperToHost) => {
    state = 'done';
    await send(message).catch(() => undefined);
    process.exit(0);
  };

  const onFrame = async ({ message, blobs }: Frame<HostToHelper>) => {
    if (message.t === 'apply' && state === 'waiting') {
      let verified;
      try {
        verified = await verifyRequest(message, blobs, turns);
      } catch (error) {
        await answer(errorFrame(error));
        return;
      }
      pending = verified.pending;
      state = 'verified';
      await send(verified.message, verified.blobs);
      return;
    }
    if (message.t === 'abort' && state === 'verified') {
      pending = undefined;
      state = 'waiting';
      return;
    }
    if (message.t === 'commit' && state === 'verified' && pending) {
      state = 'committing';
      const { plan, remember } = pending;
      try {
        await plan.commit();
      } catch (error) {
        await answer(errorFrame(error));
        return;
      }
      remember?.();
      await answer({ t: 'committed' });
      return;
    }
    await quit({ t: 'error', code: 'HELPER_FAILED', message: `apply_patch helper got an unexpected ${message.t} message` });
  };

  let queue = Promise.resolve();
  process.stdin.on('data', (chunk: Buffer) => {
    let frames: Array<Frame<HostToHelper>>;
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
