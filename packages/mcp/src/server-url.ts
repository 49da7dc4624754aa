/**
 * What model-visible texts and events may say of an HTTP server's URL. A URL may carry credentials
 * in its user info, path or query (a tenant token in the path, `?api_key=`), and the model reads a
 * failed call's text and the history keeps it: errors name the server and its origin only.
 */

/** The origin of `url` (scheme, host, port): no user info, path or query. */
export function urlOrigin(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? 'its configured URL' : origin;
  } catch {
    return 'its configured URL';
  }
}

/** Parts shorter than this are left in texts (`mcp`, `v1`, `eu`): too common to be secrets, too common to cut. */
const SHORTEST_SECRET = 6;

/** The parts of `url` a text must not carry: the URL itself, its path and query, and each user-info part, path segment and query value of six characters or more. */
function secretParts(url: string): string[] {
  const parts = [url];
  try {
    const parsed = new URL(url);
    parts.push(parsed.href, `${parsed.pathname}${parsed.search}`, parsed.search, parsed.pathname);
    parts.push(parsed.username, parsed.password, ...parsed.pathname.split('/'));
    for (const [key, value] of parsed.searchParams) parts.push(`${key}=${value}`, value, encodeURIComponent(value));
    for (const part of parsed.pathname.split('/')) parts.push(decodeURIComponentSafe(part));
  } catch {
    // not a URL: only the text as configured
  }
  // longest first, so a whole path is cut before its segments
  return [...new Set(parts.filter((part) => part.length >= SHORTEST_SECRET && part !== '/'))].sort((a, b) => b.length - a.length);
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * `text` (an error of the server or of the HTTP client, which may echo the request) with every
 * secret part of `url` replaced by `…`: the URL, its path and query, its user info, each path
 * segment and query value of six characters or more.
 */
export function withoutUrlSecrets(text: string, url: string): string {
  let out = text;
  for (const part of secretParts(url)) out = out.split(part).join('…');
  return out;
}
