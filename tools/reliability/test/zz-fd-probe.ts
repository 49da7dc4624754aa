import { execTools } from '@switchyard/tool-exec';
import { invokeTool } from '@switchyard/registry/testing';
import { mkdtempSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
const root = realpathSync(mkdtempSync('/tmp/secfs-fd-ws-'));
const cmd = 'ls /proc/$$/fd | tr "\\n" " "';
for (const [name, options, tty] of [
  ['sandboxed spawner', { sandbox: 'workspace-write' }, false],
  ['sandboxed direct', { sandbox: 'workspace-write', spawner: false }, false],
  ['sandboxed tty', { sandbox: 'workspace-write' }, true],
  ['full spawner', { sandbox: 'danger-full-access' }, false],
  ['full direct', { sandbox: 'danger-full-access', spawner: false }, false],
  ['full tty', { sandbox: 'danger-full-access' }, true],
] as const) {
  const exec = execTools({ root, approvalPolicy: 'never', shell: '/bin/sh', ...options });
  const r = await invokeTool(exec[0], { kind: 'function', arguments: JSON.stringify({ cmd, tty, yield_time_ms: 10000 }) }, { step: { cwd: root, sessionId: 's' } as never, hooks: false });
  const item = r.output?.toResponseItem('c', { kind: 'function', arguments: '{}' }) as { output: string } | undefined;
  console.log(name, '=>', JSON.stringify(item?.output.split('Output:\n')[1] ?? String(r.error)));
  await exec.shutdown();
}
console.log('host fds', (await import('node:fs')).readdirSync('/proc/self/fd').join(' '));
