import type { CellObservation, ContentItem } from '@switchyard/protocol';
import { truncateContentItems } from '@switchyard/kit';

/** The parts of an observation formatting reads (`wallTimeMs` comes from the exec / wait call instead). */
type Observed = Pick<CellObservation, 'kind' | 'cellId' | 'items'> & { error?: string };

export interface FormatOptions {
  /** Token budget of this exec / wait call. */
  maxTokens: number;
  /** Wall time of this exec / wait call (its handler's own elapsed time), in ms. */
  wallTimeMs: number;
  /** The model accepts `detail: "original"`; otherwise that detail is dropped. */
  originalImageDetail?: boolean;
}

/** The status line that heads every observation the model reads. */
export function statusLine(observation: Observed): string {
  switch (observation.kind) {
    case 'yielded':
      return `Script running with cell ID ${observation.cellId}`;
    case 'terminated':
      return 'Script terminated';
    case 'completed':
      return observation.error === undefined ? 'Script completed' : 'Script failed';
  }
}

/**
 * Formats an observation as the model sees it: default image detail
 * `high`, `original` dropped unless supported, the error appended as `Script error:\n…` before
 * truncation, truncation to the budget, then the header item. `success` is false only for a failed script.
 */
export function formatObservation(observation: Observed, options: FormatOptions): { items: ContentItem[]; success: boolean } {
  const items: ContentItem[] = observation.items.map((item) => {
    if (item.type !== 'input_image') return item;
    const detail = item.detail ?? 'high';
    if (detail === 'original' && !options.originalImageDetail) return { type: 'input_image', image_url: item.image_url };
    return { type: 'input_image', image_url: item.image_url, detail };
  });
  const failed = observation.kind === 'completed' && observation.error !== undefined;
  if (failed) items.push({ type: 'input_text', text: `Script error:\n${(observation as { error: string }).error}` });
  const truncated = truncateContentItems(items, options.maxTokens);
  const secs = (options.wallTimeMs / 1000).toFixed(1);
  const header: ContentItem = { type: 'input_text', text: `${statusLine(observation)}\nWall time ${secs} seconds\nOutput:\n` };
  return { items: [header, ...truncated], success: !failed };
}
