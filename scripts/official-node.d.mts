/** The release of each line the scripts fetch. */
export const NODE_RELEASES: { 24: string; 22: string };
/** The oldest Node line the project runs on; an older `node` gets Node 24 fetched. */
export const OLDEST_SUPPORTED_MAJOR: number;
/** Machine-wide cache folder of the fetched Node builds. */
export function cacheDir(): string;
/** Fetches the official build of Node `major` (22 or 24) into the cache once; returns its `bin` folder. */
export function ensureOfficialNode(major: 22 | 24, options?: { log?: (line: string) => void }): string;
/** The `bin` folder of the Node the project runs on (the running one when 22+, else the fetched Node 24). */
export function projectNodeBin(options?: { log?: (line: string) => void }): string;
/** `env` with `bin` first on PATH. */
export function withNodeFirst(bin: string, env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
