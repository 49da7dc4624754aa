import type { ImageDetail } from './bridge';
import { isArray, lowerCase, stringify, testPattern } from './primordials';
import { isDetail, normalizeDetail } from './values';

export const IMAGE_SHAPE = 'image expects a non-empty image URL string, an object with image_url and optional detail, or a raw MCP image block';

/** An `image()` item once its arguments are checked; `detail` is undefined when none was given. */
export interface ImageChoice {
  url: string;
  detail: ImageDetail | undefined;
}

/** Checks a string with `.length` only (before anything flattens it); throws the value size error. */
export type CheckSize = (text: string, what: string) => void;

/** `image({ image_url, detail? })`. */
function fromImageUrl(item: { image_url: string; detail?: unknown }, checkSize: CheckSize): ImageChoice {
  const given = item.image_url;
  if (given === '') throw IMAGE_SHAPE;
  checkSize(given, 'an image URL');
  const own = item.detail;
  if (own === undefined || own === null) return { url: given, detail: undefined };
  if (typeof own !== 'string') throw 'image detail must be a string when provided';
  return { url: given, detail: normalizeDetail(own) };
}

/** `image({ type: 'image', data, mimeType?, _meta? })`: a raw MCP image block. */
function fromMcpBlock(block: Record<string, unknown>, checkSize: CheckSize): ImageChoice {
  if (block.type !== 'image') throw 'image only accepts MCP image blocks, got ' + stringify(block.type);
  const data = block.data;
  if (typeof data !== 'string' || data === '') throw IMAGE_SHAPE;
  checkSize(data, 'image data');
  const mime = typeof block.mimeType === 'string' ? block.mimeType : typeof block.mime_type === 'string' ? block.mime_type : 'application/octet-stream';
  const url = testPattern(/^data:/i, data) ? data : 'data:' + mime + ';base64,' + data;
  checkSize(url, 'an image URL');
  const meta = block._meta;
  const metaDetail = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>)['codex/imageDetail'] : undefined;
  const detail = typeof metaDetail === 'string' && metaDetail.length <= 16 && isDetail(lowerCase(metaDetail)) ? (lowerCase(metaDetail) as ImageDetail) : undefined;
  return { url, detail };
}

/**
 * The URL and detail of `image(imageUrlOrItem, detail?)` (a URL string, `{ image_url, detail? }`
 * or a raw MCP image block; the second argument overrides the item's detail). Throws the
 * reference's texts, as strings: a bad shape, a bad detail, a remote URL, a non-`data:` URL.
 */
export function resolveImage(imageUrlOrItem: unknown, detail: unknown, checkSize: CheckSize): ImageChoice {
  const first = imageUrlOrItem;
  let choice: ImageChoice;
  if (typeof first === 'string') {
    if (first === '') throw IMAGE_SHAPE;
    checkSize(first, 'an image URL');
    choice = { url: first, detail: undefined };
  } else if (first !== null && typeof first === 'object' && !isArray(first)) {
    const item = first as Record<string, unknown>;
    if (typeof item.image_url === 'string') choice = fromImageUrl(item as { image_url: string }, checkSize);
    else if (typeof item.type === 'string') choice = fromMcpBlock(item, checkSize);
    else throw IMAGE_SHAPE;
  } else {
    throw IMAGE_SHAPE;
  }
  if (detail !== undefined && detail !== null) {
    if (typeof detail !== 'string') throw 'image detail must be a string when provided';
    choice.detail = normalizeDetail(detail);
  }
  if (testPattern(/^https?:/i, choice.url)) throw 'Tool call failed: remote image URLs are not supported in tool outputs. Pass a base64 data URI instead';
  if (!testPattern(/^data:/i, choice.url)) throw 'image expects a base64 data: URL';
  return choice;
}
