/**
 * Commands the `untrusted` policy runs without asking: read-only inspection tools, alone or joined
 * with `&&`, `||`, `;` or `|`. Deliberately conservative: any expansion, redirection, subshell,
 * glob or escape makes the command "not known safe" (it is then asked about, never refused).
 */
const SAFE_PROGRAMS = new Set([
  'cat', 'cd', 'cut', 'echo', 'expr', 'false', 'grep', 'head', 'id', 'ls', 'nl', 'paste', 'pwd',
  'rev', 'seq', 'sort', 'stat', 'tail', 'tr', 'true', 'uname', 'uniq', 'wc', 'which', 'whoami',
  'basename', 'dirname', 'date', 'printf', 'rg', 'du', 'df',
]);

const SAFE_GIT_SUBCOMMANDS = new Set(['status', 'log', 'diff', 'show', 'branch', 'rev-parse', 'ls-files', 'blame']);

const UNSAFE_FIND_OPTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir', '-delete', '-fls', '-fprint', '-fprint0', '-fprintf']);
const UNSAFE_RG_OPTIONS = ['--pre', '--hostname-bin', '--search-zip', '-z'];

/** Splits a command into words and the operators between them; `undefined` when it uses anything else. */
function tokenize(command: string): string[] | undefined {
  const tokens: string[] = [];
  let i = 0;
  while (i < command.length) {
    const c = command[i];
    if (c === ' ' || c === '\t') {
      i++;
      continue;
    }
    const two = command.slice(i, i + 2);
    if (two === '&&' || two === '||') {
      tokens.push(two);
      i += 2;
      continue;
    }
    if (c === ';' || c === '|') {
      tokens.push(c);
      i++;
      continue;
    }
    let word = '';
    while (i < command.length && !' \t;|&'.includes(command[i])) {
      const ch = command[i];
      if (ch === "'") {
        const end = command.indexOf("'", i + 1);
        if (end < 0) return undefined;
        word += command.slice(i + 1, end);
        i = end + 1;
        continue;
      }
      if (ch === '"') {
        const end = command.indexOf('"', i + 1);
        if (end < 0) return undefined;
        const inner = command.slice(i + 1, end);
        if (/[$`\\!]/.test(inner)) return undefined;
        word += inner;
        i = end + 1;
        continue;
      }
      if (/[$`\\<>(){}*?[\]~!#\n\r]/.test(ch)) return undefined;
      word += ch;
      i++;
    }
    if (i < command.length && command[i] === '&' && command[i + 1] !== '&') return undefined;
    tokens.push(word);
  }
  return tokens;
}

function isSafeSimpleCommand(words: string[]): boolean {
  if (words.length === 0) return false;
  const [program, ...args] = words;
  if (program === 'git') return SAFE_GIT_SUBCOMMANDS.has(args[0] ?? '') && !args.some((arg) => arg.startsWith('--output'));
  if (program === 'find') return !args.some((arg) => UNSAFE_FIND_OPTIONS.has(arg));
  if (program === 'sed') return args[0] === '-n' && args.length >= 2 && args.length <= 3 && /^\d+(,\d+)?p$/.test(args[1]);
  if (program === 'rg') return !args.some((arg) => UNSAFE_RG_OPTIONS.some((bad) => arg === bad || arg.startsWith(`${bad}=`)));
  if (program === 'sort') return !args.some((arg) => arg === '-o' || arg.startsWith('--output'));
  if (program === 'date') return !args.some((arg) => arg === '-s' || arg.startsWith('--set'));
  return SAFE_PROGRAMS.has(program);
}

/** True when `command` only reads (see the list above); used by the `untrusted` approval policy. */
export function isKnownSafeCommand(command: string): boolean {
  const tokens = tokenize(command.trim());
  if (!tokens || tokens.length === 0) return false;
  let words: string[] = [];
  for (const token of [...tokens, ';']) {
    if (token === '&&' || token === '||' || token === ';' || token === '|') {
      if (!isSafeSimpleCommand(words)) return false;
      words = [];
    } else words.push(token);
  }
  return true;
}
