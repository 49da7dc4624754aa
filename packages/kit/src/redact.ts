const CREDENTIAL_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  // Authorization schemes
  [/\b(Bearer|Basic|Token)\s+[\w.~+/=-]{6,}/gi, '$1 [redacted]'],
  // key=value and "key": "value" forms of the usual secret names
  [/((?:api[-_]?key|x-api-key|access[-_]?token|refresh[-_]?token|auth[-_]?token|token|secret|password|passwd|authorization|client[-_]?secret|sig|signature)["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"'&,;}]+/gi, '$1[redacted]'],
  // user:password@ in URLs
  [/(\/\/)[^/\s:@]+:[^/\s@]+@/g, '$1[redacted]@'],
  // well-known key prefixes (OpenAI, Anthropic, GitHub, Slack, AWS, Google)
  [/\b(?:sk|pk|rk)-[\w-]{8,}/g, '[redacted]'],
  [/\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_\w{8,}/g, '[redacted]'],
  [/\bxox[abprs]-[\w-]{8,}/g, '[redacted]'],
  [/\bAKIA[0-9A-Z]{12,}/g, '[redacted]'],
  [/\bAIza[\w-]{20,}/g, '[redacted]'],
];

/**
 * `text` with credential-looking parts replaced by `[redacted]`: authorization schemes (`Bearer
 * …`), `key=value` / `"key": "value"` forms of the usual secret names (`api_key`, `token`,
 * `password`, `secret`, `authorization`, …), `user:password@` in URLs, and well-known key prefixes
 * (`sk-`, `ghp_`, `xoxb-`, `AKIA`, `AIza`). A guess by shape, for text leaving the host (an error
 * shown to a page or a log); never throws.
 */
export function redactCredentials(text: string): string {
  let out = text;
  for (const [pattern, replacement] of CREDENTIAL_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
