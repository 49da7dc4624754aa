/**
 * Bundles the Lark grammar of the `apply_patch` input (`apply-patch.lark`, byte for byte the text the
 * model's sampler is constrained by) into `apply-patch.generated.ts`. Run by the package's `build`
 * script before tsup; `grammar.test.ts` fails when the committed module differs from a fresh one.
 */
import { fileEmbedding, isMain } from '@switchyard/config/embed';

export const GRAMMAR_MODULE = fileEmbedding(import.meta.url, { source: 'apply-patch.lark', name: 'APPLY_PATCH_GRAMMAR', what: "The Lark grammar constraining the model's `apply_patch` input (blank lines included).", regenerate: 'pnpm --filter @switchyard/tool-apply-patch run build:grammar' });

if (isMain(import.meta.url)) GRAMMAR_MODULE.write();
