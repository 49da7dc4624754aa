/** `engines.node` of the package in `dir` when it excludes the running Node, else undefined. */
export function unmetNodeRange(dir: string): string | undefined;
