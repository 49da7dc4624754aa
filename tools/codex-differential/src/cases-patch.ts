import { custom, fn, type DiffCase } from './case.ts';

const patch = (...lines: string[]) => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');
const applyPatch = (callId: string, text: string) => custom(callId, 'apply_patch', text);
const FILES = { 'a.txt': 'one\ntwo\nthree\n', 'b.txt': 'bee\n', 'dir/c.txt': 'see\n' };

/** A patch case: the patch applied directly, the workspace compared after. */
const direct = (id: string, what: string, text: string): DiffCase => ({
  id: `patch/${id}`,
  what,
  files: FILES,
  compareFiles: true,
  steps: [[applyPatch('call_1', text)]],
});

export const PATCH_CASES: DiffCase[] = [
  direct('add', 'Add File', patch('*** Add File: new/n.txt', '+hello', '+world')),
  direct('update', 'Update File with context', patch('*** Update File: a.txt', '@@', ' one', '-two', '+TWO', ' three')),
  direct('delete', 'Delete File', patch('*** Delete File: b.txt')),
  direct('move', 'Update File with Move to', patch('*** Update File: dir/c.txt', '*** Move to: moved/c.txt', '@@', '-see', '+sea')),
  direct('several', 'add, update and delete in one patch', patch('*** Add File: x.txt', '+x', '*** Update File: a.txt', '@@', '-one', '+ONE', '*** Delete File: b.txt')),
  direct('eof', 'an update anchored at the end of file', patch('*** Update File: a.txt', '@@', ' two', '-three', '+3', '*** End of File')),
  direct('append', 'a pure addition chunk', patch('*** Update File: a.txt', '@@', '+four')),
  direct('same-file-twice', 'two Update File sections for one file', patch('*** Update File: a.txt', '@@', '-one', '+ONE', '*** Update File: a.txt', '@@', '-two', '+TWO')),
  direct('add-overwrites', 'Add File over an existing file', patch('*** Add File: b.txt', '+replaced')),
  direct('missing-update', 'Update File of a missing file', patch('*** Update File: missing.txt', '@@', '-a', '+b')),
  direct('missing-delete', 'Delete File of a missing file', patch('*** Delete File: missing.txt')),
  direct('delete-directory', 'Delete File of a directory', patch('*** Delete File: dir')),
  direct('context-not-found', 'context that is not in the file', patch('*** Update File: a.txt', '@@ nothing', '-two', '+2')),
  direct('lines-not-found', 'old lines that are not in the file', patch('*** Update File: a.txt', '@@', '-zwei', '+2')),
  direct('bad-header', 'an invalid hunk header', patch('*** Frobnicate File: a.txt')),
  direct('no-begin', 'no Begin Patch line', '*** Update File: a.txt\n@@\n-one\n+1\n*** End Patch\n'),
  direct('no-end', 'no End Patch line', '*** Begin Patch\n*** Delete File: b.txt\n'),
  direct('empty', 'an empty patch', patch()),
  direct('empty-update', 'an Update File with no chunk', patch('*** Update File: a.txt')),
  direct('outside-root', 'a path outside the workspace', patch('*** Add File: ../outside.txt', '+x')),
  {
    id: 'patch/heredoc',
    what: 'apply_patch through exec_command with a heredoc',
    files: FILES,
    compareFiles: true,
    steps: [[fn('call_1', 'exec_command', { cmd: `apply_patch <<'EOF'\n${patch('*** Update File: a.txt', '@@', '-one', '+uno')}EOF\n` })]],
  },
  {
    id: 'patch/heredoc-failure',
    what: 'a failing patch through exec_command',
    files: FILES,
    compareFiles: true,
    steps: [[fn('call_1', 'exec_command', { cmd: `apply_patch <<'EOF'\n${patch('*** Update File: missing.txt', '@@', '-a', '+b')}EOF\n` })]],
  },
];
