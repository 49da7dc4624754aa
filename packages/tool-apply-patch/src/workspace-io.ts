import * as fs from 'node:fs';
import type { Stats } from 'node:fs';
import { promisify } from 'node:util';

/** A value, or a promise of it: what an {@link WorkspaceIo} call answers (`await` takes both). */
export type Awaitable<T> = T | Promise<T>;

/**
 * The file-system calls {@link WorkspaceFs} makes, on descriptors and on paths it builds below
 * descriptors. Two sets exist with the same meaning: asynchronous (libuv's thread pool: the
 * caller's event loop keeps running while a call waits on the disk) and synchronous (one system
 * call each, no thread hop and no promise per call). The walk's safety lies in which paths and
 * flags it passes (`O_NOFOLLOW`, one name below an open folder), never in the set, so both give
 * the same guarantees; only the cost and who waits differ.
 */
export interface WorkspaceIo {
  open(path: string, flags: number, mode?: number): Awaitable<number>;
  close(fd: number): Awaitable<void>;
  fstat(fd: number): Awaitable<Stats>;
  /** Reads into `buffer` at `offset`, from file position `position`; answers the bytes read. */
  read(fd: number, buffer: Buffer, offset: number, length: number, position: number): Awaitable<number>;
  /** Writes every byte of `bytes` from the start of the file. */
  writeAll(fd: number, bytes: Uint8Array): Awaitable<void>;
  fchmod(fd: number, mode: number): Awaitable<void>;
  lstat(path: string): Awaitable<Stats>;
  readlink(path: string): Awaitable<string>;
  realpath(path: string): Awaitable<string>;
  rename(from: string, to: string): Awaitable<void>;
  unlink(path: string): Awaitable<void>;
  symlink(target: string, path: string): Awaitable<void>;
  rmdir(path: string): Awaitable<void>;
  mkdir(path: string): Awaitable<void>;
}

const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);

/** The asynchronous set: for a caller whose event loop must keep running (the library in a host's process). */
export const asyncIo: WorkspaceIo = {
  open: promisify(fs.open) as (path: string, flags: number, mode?: number) => Promise<number>,
  close: promisify(fs.close),
  fstat: promisify(fs.fstat) as (fd: number) => Promise<Stats>,
  read: async (fd, buffer, offset, length, position) => (await readAsync(fd, buffer, offset, length, position)).bytesRead,
  async writeAll(fd, bytes) {
    for (let written = 0; written < bytes.byteLength; ) {
      written += (await writeAsync(fd, bytes, written, bytes.byteLength - written, written)).bytesWritten;
    }
  },
  fchmod: promisify(fs.fchmod),
  lstat: promisify(fs.lstat) as (path: string) => Promise<Stats>,
  readlink: promisify(fs.readlink) as (path: string) => Promise<string>,
  realpath: promisify(fs.realpath.native) as (path: string) => Promise<string>,
  rename: promisify(fs.rename),
  unlink: promisify(fs.unlink),
  symlink: promisify(fs.symlink) as (target: string, path: string) => Promise<void>,
  rmdir: promisify(fs.rmdir) as (path: string) => Promise<void>,
  mkdir: promisify(fs.mkdir) as (path: string) => Promise<void>,
};

/** The synchronous set: for a process of its own whose blocking stalls no one (the apply_patch helper). */
export const syncIo: WorkspaceIo = {
  open: (path, flags, mode) => fs.openSync(path, flags, mode),
  close: (fd) => fs.closeSync(fd),
  fstat: (fd) => fs.fstatSync(fd),
  read: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
  writeAll(fd, bytes) {
    for (let written = 0; written < bytes.byteLength; ) written += fs.writeSync(fd, bytes, written, bytes.byteLength - written, written);
  },
  fchmod: (fd, mode) => fs.fchmodSync(fd, mode),
  lstat: (path) => fs.lstatSync(path),
  readlink: (path) => fs.readlinkSync(path),
  realpath: (path) => fs.realpathSync.native(path),
  rename: (from, to) => fs.renameSync(from, to),
  unlink: (path) => fs.unlinkSync(path),
  symlink: (target, path) => fs.symlinkSync(target, path),
  rmdir: (path) => fs.rmdirSync(path),
  mkdir: (path) => fs.mkdirSync(path),
};

let current: WorkspaceIo = asyncIo;

/**
 * Chooses the set every {@link WorkspaceFs} opened afterwards uses, process-wide. The default is
 * asynchronous; the apply_patch helper switches to synchronous at start: it is a process of its
 * own serving one patch at a time, so a blocking call holds up nothing else, and each file
 * operation then costs one system call instead of a thread-pool round trip and a promise.
 */
export function useWorkspaceIo(mode: 'sync' | 'async'): void {
  current = mode === 'sync' ? syncIo : asyncIo;
}

/** The set chosen by {@link useWorkspaceIo}. */
export function workspaceIo(): WorkspaceIo {
  return current;
}

/** Runs one call of either set as a promise: a synchronous call's exception becomes a rejection. */
export async function attempt<T>(call: () => Awaitable<T>): Promise<T> {
  return call();
}
