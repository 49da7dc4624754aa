const DENIAL_MARKERS = [
  'operation not permitted',
  'permission denied',
  'read-only file system',
  'network is unreachable',
  'seccomp',
  'sandbox',
  'bwrap:',
];

/** True when a finished sandboxed command looks like the sandbox stopped it (non-zero exit + a telltale message). */
export function isLikelySandboxDenial(exitCode: number, output: string): boolean {
  if (exitCode === 0 || exitCode === 127) return false;
  const lower = output.toLowerCase();
  return DENIAL_MARKERS.some((marker) => lower.includes(marker));
}
