import { describe, expect, test } from 'vitest';
import { sandboxEnvironment } from './environment';

const host = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/me',
  LANG: 'C.UTF-8',
  LC_ALL: 'C',
  TERM: 'xterm',
  TZ: 'UTC',
  USER: 'me',
  SHELL: '/bin/bash',
  TMPDIR: '/tmp',
  PWD: '/work',
  EDITOR: 'vi',
  OPENAI_API_KEY: 'sk-1',
  DATABASE_URL: 'postgres://u:p@h/db',
  APP_DATABASE_URL: 'postgres://u:p@h/db2',
  MYSQL_PWD: 'pw',
  GH_PAT: 'ghp_x',
  NPM_AUTH: 'a',
  PASSWD: 'p',
  CREDENTIALS: 'c',
  AWS_SHARED_CREDENTIALS_FILE: '/x',
  DB_PASS: 'd',
};
const SECRETS = ['OPENAI_API_KEY', 'DATABASE_URL', 'APP_DATABASE_URL', 'MYSQL_PWD', 'GH_PAT', 'NPM_AUTH', 'PASSWD', 'CREDENTIALS', 'AWS_SHARED_CREDENTIALS_FILE', 'DB_PASS'];

describe('sandboxEnvironment', () => {
  test('sandboxed modes pass only the core set, whatever the names of the other variables', () => {
    for (const mode of ['read-only', 'workspace-write'] as const) {
      const env = sandboxEnvironment({ mode, hostEnv: host });
      expect(Object.keys(env).sort()).toEqual(['HOME', 'LANG', 'LC_ALL', 'PATH', 'SHELL', 'TERM', 'TMPDIR', 'TZ', 'USER']);
    }
  });

  test('inheritEnv adds names and PREFIX* patterns; env adds values; all passes everything', () => {
    const env = sandboxEnvironment({ mode: 'workspace-write', hostEnv: host, inheritEnv: ['EDITOR', 'AWS_*'], env: { CI: '1' } });
    expect(env).toMatchObject({ EDITOR: 'vi', AWS_SHARED_CREDENTIALS_FILE: '/x', CI: '1', PATH: '/usr/bin:/bin' });
    expect(env.GH_PAT).toBeUndefined();
    expect(sandboxEnvironment({ mode: 'read-only', hostEnv: host, inheritEnv: 'all' })).toEqual(host);
  });

  test('danger-full-access keeps the name filter by default: ordinary variables stay, secret-looking ones go', () => {
    const env = sandboxEnvironment({ mode: 'danger-full-access', hostEnv: host });
    for (const name of SECRETS) expect(env[name], name).toBeUndefined();
    expect(env).toMatchObject({ PWD: '/work', EDITOR: 'vi', PATH: '/usr/bin:/bin' });
  });

  test('a TMPDIR the sandbox cannot write becomes /tmp', () => {
    expect(sandboxEnvironment({ mode: 'workspace-write', hostEnv: { TMPDIR: '/var/tmp/x' } }).TMPDIR).toBe('/tmp');
    expect(sandboxEnvironment({ mode: 'workspace-write', hostEnv: { TMPDIR: '/w/tmp' }, writable: ['/w'] }).TMPDIR).toBe('/w/tmp');
    expect(sandboxEnvironment({ mode: 'danger-full-access', hostEnv: { TMPDIR: '/var/tmp/x' } }).TMPDIR).toBe('/var/tmp/x');
  });
});
