import { createCipheriv, createDecipheriv, createHash, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { nkeys } from '@nats-io/transport-node';
import { config } from './connection';

/**
 * Sealed placements. Every placement agrees a fresh key: the agent host and the runtime host each
 * make an ephemeral X25519 key pair, sign their half of the exchange with their NKey (Ed25519,
 * through the NATS team's nkeys library), and derive two ChaCha20-Poly1305 keys (one per
 * direction) with HKDF-SHA256 over the shared secret. A bus client that reads the subjects sees
 * only ciphertext; one that publishes on them cannot make a frame that opens.
 *
 * A sealed message is `<seq: 8 bytes, big-endian> <ciphertext of (kind byte, seq, body length: 4,
 * body, zero padding)> <tag: 16>`; the nonce is the sequence number (never reused under one
 * direction's key), so a frame replayed, reordered or moved to another connection does not open.
 * The sealed part is padded to a size class ({@link sizeClass}), so a reader of the bus learns
 * the class of a frame, not its length.
 */

/** An NKey (Ed25519) this side signs placements with. */
export interface NatsIdentity {
  readonly publicKey: string;
  sign(data: Uint8Array): Uint8Array;
}

/** The option that names an identity: an NKey seed (`SU…`) or a file holding one. */
export type NatsIdentityOption = { seed: string } | { seedFile: string };

const encoder = new TextEncoder();

/**
 * The identity from `option`, else the NKey the connection logs in with, else a key made for
 * this process (peers that pin keys will not accept it). Throws `CONFIG` naming the option.
 */
export function loadIdentity(option: NatsIdentityOption | undefined, auth: unknown, who: string): NatsIdentity {
  let seed: string | undefined;
  const name = `${who} option identity`;
  if (option !== undefined) {
    if (typeof option !== 'object' || option === null) throw config(`${name} must be { seed } or { seedFile }`);
    if ('seed' in option && typeof option.seed === 'string') seed = option.seed;
    else if ('seedFile' in option && typeof option.seedFile === 'string') {
      try {
        seed = readFileSync(option.seedFile, 'utf8');
      } catch (error) {
        throw config(`${name}.seedFile could not be read: ${(error as Error).message}`);
      }
    } else throw config(`${name} must be { seed } or { seedFile }`);
  } else if (typeof auth === 'object' && auth !== null && 'nkeySeed' in auth && typeof auth.nkeySeed === 'string') {
    seed = auth.nkeySeed;
  } else if (typeof auth === 'object' && auth !== null && 'nkeySeedFile' in auth && typeof auth.nkeySeedFile === 'string') {
    try {
      seed = readFileSync(auth.nkeySeedFile, 'utf8');
    } catch {
      seed = undefined; // the connection reports the unreadable file
    }
  }
  const pair = seed === undefined ? nkeys.createUser() : fromSeed(seed.trim(), name);
  // Ed25519 as nkeys defines it, computed by node:crypto (OpenSSL): the same signatures as
  // `pair.sign`, at a fraction of the cost of the library's pure-JavaScript curve.
  const raw = (pair as unknown as { getRawSeed(): Uint8Array }).getRawSeed();
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8, Buffer.from(raw)]), format: 'der', type: 'pkcs8' });
  return { publicKey: pair.getPublicKey(), sign: (data) => sign(null, data, privateKey) };
}

/** DER prefixes of an Ed25519 private key (PKCS #8) and public key (SPKI) around their 32 raw bytes. */
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The Ed25519 key of a public NKey (checked by nkeys first): base32 of a prefix byte, 32 key bytes and a CRC. */
function verifyingKey(key: string): KeyObject {
  let cached = verifyingKeys.get(key);
  if (cached) return cached;
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of key) {
    value = (value << 5) | BASE32.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  cached = createPublicKey({ key: Buffer.concat([ED25519_SPKI, Buffer.from(bytes.slice(1, 33))]), format: 'der', type: 'spki' });
  if (verifyingKeys.size >= 1_000) verifyingKeys.clear();
  verifyingKeys.set(key, cached);
  return cached;
}
const verifyingKeys = new Map<string, KeyObject>();

function fromSeed(seed: string, name: string) {
  try {
    return nkeys.fromSeed(encoder.encode(seed));
  } catch (error) {
    throw config(`${name} is not a valid NKey seed (${(error as Error).message})`);
  }
}

/** Checks a list of public NKeys (`U…`); throws `CONFIG` naming the option. */
export function checkPublicKeys(keys: unknown, name: string): string[] {
  const list = typeof keys === 'string' ? [keys] : keys;
  if (!Array.isArray(list) || list.length === 0) throw config(`${name} must be a public NKey (U…) or a non-empty array of them`);
  for (const key of list) {
    if (!isPublicKey(key)) throw config(`${name} must hold public NKeys (U…); ${JSON.stringify(key)} is not one`);
  }
  return list as string[];
}

function isPublicKey(key: unknown): key is string {
  if (typeof key !== 'string' || !/^[UNA][A-Z2-7]{55}$/.test(key)) return false;
  try {
    nkeys.fromPublic(key);
    return true;
  } catch {
    return false;
  }
}

/** Whether `signature` (base64) over `data` was made by public key `key`. */
export function verified(key: unknown, data: string, signature: unknown): boolean {
  if (!isPublicKey(key) || typeof signature !== 'string' || signature.length > 200) return false;
  try {
    return verify(null, encoder.encode(data), verifyingKey(key), Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

export function signed(identity: NatsIdentity, data: string): string {
  return Buffer.from(identity.sign(encoder.encode(data))).toString('base64');
}

/** One side's ephemeral X25519 key pair for one placement. */
export interface Ephemeral {
  /** The public half, base64url (what goes in the placement message). */
  readonly public: string;
  readonly privateKey: KeyObject;
}

export function ephemeral(): Ephemeral {
  const pair = generateKeyPairSync('x25519');
  const jwk = pair.publicKey.export({ format: 'jwk' });
  return { public: String(jwk.x), privateKey: pair.privateKey };
}

/** The two directions' keys of one placement. */
export interface PlacementKeys {
  /** Seals frames from the agent host to the runtime host. */
  toRuntime: Buffer;
  /** Seals frames from the runtime host to the agent host. */
  toAgent: Buffer;
}

/**
 * The keys both ends derive: X25519(own private, other's public), then HKDF-SHA256 salted with
 * the hash of both signed placement texts (so a key belongs to exactly one exchange). `undefined`
 * when the other's public key is malformed.
 */
export function deriveKeys(own: Ephemeral, otherPublic: unknown, transcript: string): PlacementKeys | undefined {
  if (typeof otherPublic !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(otherPublic)) return undefined;
  let secret: Buffer;
  try {
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: otherPublic }, format: 'jwk' });
    secret = diffieHellman({ privateKey: own.privateKey, publicKey });
  } catch {
    return undefined;
  }
  const salt = createHash('sha256').update(transcript).digest();
  const okm = Buffer.from(hkdfSync('sha256', secret, salt, 'switchyard code-mode-nats frames v3', 64));
  return { toRuntime: okm.subarray(0, 32), toAgent: okm.subarray(32, 64) };
}

const CIPHER = 'chacha20-poly1305';
const TAG_BYTES = 16;
/** The sealed head: the kind byte, the sequence number, the body's length. */
const HEAD_BYTES = 1 + 8 + 4;
/** Bytes a sealed message adds to its body before padding: the clear sequence number, the sealed head, the tag. */
export const SEAL_OVERHEAD = 8 + HEAD_BYTES + TAG_BYTES;
/** The smallest size class: every heartbeat-sized frame (a result of a call, an ack) looks the same. */
const SMALLEST_CLASS = 512;

/**
 * The size class of `bytes` (the sealed head and body): 512 bytes, then powers of two and the
 * halfway points between them (768, 1,024, 1,536, 2,048, 3,072, …), at most `limit` (a full chunk,
 * which every message bigger than the server's payload limit is cut into anyway). Padding costs at
 * most half of a message; a class tells a reader about one bit per doubling of the length.
 */
export function sizeClass(bytes: number, limit = Number.POSITIVE_INFINITY): number {
  if (bytes >= limit) return bytes;
  let size = SMALLEST_CLASS;
  while (size < bytes) size = size % 3 === 0 ? (size / 3) * 4 : size + size / 2;
  return Math.min(size, limit);
}

function nonce(seq: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeBigUInt64BE(BigInt(seq), 4);
  return out;
}

/**
 * Seals one message of `kind` with sequence number `seq`, padded to its size class. `maxBody` is
 * the largest body the sender puts in one message (a full chunk): padding never makes a message
 * bigger than a full one.
 */
export function seal(key: Buffer, kind: number, seq: number, body: Uint8Array, maxBody = Number.POSITIVE_INFINITY): Uint8Array {
  const cipher = createCipheriv(CIPHER, key, nonce(seq), { authTagLength: TAG_BYTES });
  const head = Buffer.alloc(HEAD_BYTES);
  head[0] = kind;
  head.writeBigUInt64BE(BigInt(seq), 1);
  head.writeUInt32BE(body.length, 9);
  const padding = Buffer.alloc(sizeClass(HEAD_BYTES + body.length, HEAD_BYTES + Math.max(body.length, maxBody)) - HEAD_BYTES - body.length);
  const clear = Buffer.alloc(8);
  clear.writeBigUInt64BE(BigInt(seq));
  return Buffer.concat([clear, cipher.update(head), cipher.update(body), cipher.update(padding), cipher.final(), cipher.getAuthTag()]);
}

/** What a sealed message held (without its padding), or `undefined` when it does not open under `key`. */
export function open(key: Buffer, payload: Uint8Array): { kind: number; seq: number; body: Uint8Array } | undefined {
  if (payload.length < SEAL_OVERHEAD) return undefined;
  const data = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const seq = Number(data.readBigUInt64BE(0));
  if (!Number.isSafeInteger(seq)) return undefined;
  try {
    const decipher = createDecipheriv(CIPHER, key, nonce(seq), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(data.subarray(8, data.length - TAG_BYTES)), decipher.final()]);
    // The sealed sequence number must be the clear one (it is: the nonce binds them; checked all the same).
    if (Number(plain.readBigUInt64BE(1)) !== seq) return undefined;
    const length = plain.readUInt32BE(9);
    if (length > plain.length - HEAD_BYTES) return undefined;
    return { kind: plain[0], seq, body: plain.subarray(HEAD_BYTES, HEAD_BYTES + length) };
  } catch {
    return undefined;
  }
}
