// Run by tools/check-packs in a fresh project where this package was installed from its tarball,
// under the OS temp folder — which the exec sandbox hides. Through the ESM and the CJS build, the
// built helper (one bundled file) must start inside the sandbox, write in the workspace, and have
// a write outside it refused by the kernel (the path check is off here: allowOutsideRoot).
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIRECT_SOURCE } from '@switchyard/protocol';
import { createStepContext } from '@switchyard/kit';

const builds = { esm: await import('@switchyard/tool-apply-patch'), cjs: createRequire(import.meta.url)('@switchyard/tool-apply-patch') };
// Outside /tmp, so the sandbox sees it read-only; world-writable, so only the mount stops the write.
const outside = mkdtempSync('/var/tmp/pack-smoke-outside-');
chmodSync(outside, 0o777);
const problems = [];
try {
  for (const [build, { applyPatchTool }] of Object.entries(builds)) {
    const root = mkdtempSync(join(tmpdir(), 'pack-smoke-'));
    const tool = applyPatchTool({ allowOutsideRoot: true, sandbox: { mode: 'workspace-write' } });
    const call = (input) =>
      tool
        .handle({ callId: 'smoke', toolName: tool.name, source: DIRECT_SOURCE, payload: { kind: 'custom', input }, signal: new AbortController().signal, step: createStepContext({ cwd: root }), emit() {} })
        .then((output) => output.toResponseItem('smoke', { kind: 'custom', input: '' }).output, (error) => error.message);
    const inside = await call('*** Begin Patch\n*** Add File: inside.txt\n+in\n*** End Patch');
    // A success is wrapped as a finished command: exit code, wall time in whole seconds, then the summary.
    if (!/^Exit code: 0\nWall time: \d+ seconds\nOutput:\nSuccess\. Updated the following files:\nA inside\.txt\n$/.test(inside) || readFileSync(join(root, 'inside.txt'), 'utf8') !== 'in\n') problems.push(`${build}: the sandboxed patch answered ${JSON.stringify(inside)}`);
    const escaped = join(outside, `${build}.txt`);
    const refused = await call(`*** Begin Patch\n*** Add File: ${escaped}\n+out\n*** End Patch`);
    if (refused !== `Failed to write file ${escaped}: Read-only file system. No files were changed.`) problems.push(`${build}: the write outside answered ${JSON.stringify(refused)}`);
    rmSync(root, { recursive: true, force: true });
  }
  if (readdirSync(outside).length > 0) problems.push(`written outside: ${readdirSync(outside).join(', ')}`);
} finally {
  rmSync(outside, { recursive: true, force: true });
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log('pack smoke: sandboxed apply_patch from the installed tarball (ESM and CJS) writes inside, is refused outside');
