import type { ApplyPatchError } from './apply-patch-error';
import { applyPatch, type VerifyPatchOptions } from './verify-patch';

/** The error `applyPatch` refuses `patch` with in `root`; throws when the patch applies. */
export async function patchFailure(root: string, patch: string, options: Partial<VerifyPatchOptions> = {}): Promise<ApplyPatchError> {
  try {
    await applyPatch(patch, { root, ...options });
  } catch (error) {
    return error as ApplyPatchError;
  }
  throw new Error('expected applyPatch to fail');
}
