/**
 * One Redis command as the RESP bytes a client writes: `*<n>\r\n` then `$<length>\r\n<bytes>\r\n`
 * per part. Built in one Buffer (sized first, then written), so a script call with a protobuf
 * argument costs one allocation, with none of the per-argument pieces a generic client assembles
 * (ioredis joins strings and Buffers argument by argument). Strings are written as UTF-8, numbers
 * as their decimal text (what ioredis sends for them), byte arrays as they are.
 *
 * Two paths, the same bytes: the usual command (names, keys, ids: ASCII text) is sized from the
 * string lengths and written in one pass, with no byte-length call per string; the first character
 * above 127 abandons it for the general path, which measures each string's UTF-8 length first.
 */
import { Buffer } from "node:buffer"
import type { ScriptArg } from "./transport.js"

const crlf = 2

/** The decimal text of a number, as ioredis sends it (`String(n)`). */
const numberText = (n: number): string => String(n)

/** Bytes of a bulk string header `$<len>\r\n` plus the trailing `\r\n`. */
const bulkOverhead = (len: number): number => 1 + decimalDigits(len) + crlf + crlf

const decimalDigits = (n: number): number =>
  n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10_000 ? 4 : n < 100_000 ? 5 : n < 1_000_000 ? 6 : String(n).length

/**
 * Where a frame's bytes go: `size` bytes to write it into (their content does not matter), e.g. a
 * view into a buffer a connection reuses (lightRedis.ts). Called again for the same frame when the
 * ASCII path gives up: the bytes handed out earlier for it are not used any more.
 */
export type FrameBytes = (size: number) => Buffer

/** Bytes of their own for each frame. */
const ownBytes: FrameBytes = (size) => Buffer.allocUnsafe(size)

/** The RESP bytes of `head` (the command name and its leading parts), then `keys`, then `args`. */
export const respFrame = (
  head: ReadonlyArray<string>,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  bytes: FrameBytes = ownBytes
): Buffer => asciiFrame(undefined, head, keys, args, bytes) ?? generalFrame(undefined, head, keys, args, bytes)

/** The leading parts of a command as RESP bulk strings, built once (`respPrefix`) and copied into each frame (`respFrameAfter`). */
export interface RespPrefix {
  /** How many parts the bytes hold. */
  readonly parts: number
  readonly bytes: Uint8Array
}

const none: ReadonlyArray<string> = []

/** The bulk strings of `head` then `keys` (no `*<n>` header): a prefix for frames that start with them. */
export const respPrefix = (head: ReadonlyArray<string>, keys: ReadonlyArray<string>): RespPrefix => {
  const frame = respFrame(head, keys, [])
  const parts = head.length + keys.length
  return { parts, bytes: frame.subarray(headerLength(parts, undefined)) }
}

/** The same bytes as `respFrame(head, keys, args)` for the `head` and `keys` that `prefix` was built from. */
export const respFrameAfter = (
  prefix: RespPrefix,
  args: ReadonlyArray<ScriptArg>,
  bytes: FrameBytes = ownBytes
): Buffer => asciiFrame(prefix, none, none, args, bytes) ?? generalFrame(prefix, none, none, args, bytes)

/** Most key lists whose EVALSHA prefix `evalshaFrames` keeps; past it the cache starts over. */
const maxPrefixes = 1000

/**
 * The bytes of `EVALSHA sha <key count> keys... args...`, for one connection's script calls. A
 * frozen key list is one its caller reuses (the enqueue of one queue: broker/enqueue.ts): the bytes
 * of EVALSHA, the SHA, the key count and the keys are built once for it, per script, and copied
 * into each frame (at most `maxPrefixes` lists are kept); any other list is framed in full.
 * `bytes`: where each frame is written (by default bytes of its own).
 */
export const evalshaFrames = (): ((
  sha: string,
  count: string,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  bytes?: FrameBytes
) => Buffer) => {
  const prefixes = new Map<ReadonlyArray<string>, { readonly sha: string; readonly prefix: RespPrefix }>()
  return (sha, count, keys, args, bytes = ownBytes) => {
    if (!Object.isFrozen(keys)) return respFrame(["EVALSHA", sha, count], keys, args, bytes)
    let p = prefixes.get(keys)
    if (p === undefined || p.sha !== sha) {
      if (prefixes.size >= maxPrefixes) prefixes.clear()
      p = { sha, prefix: respPrefix(["EVALSHA", sha, count], keys) }
      prefixes.set(keys, p)
    }
    return respFrameAfter(p.prefix, args, bytes)
  }
}

/** Strings longer than this are checked and copied natively; shorter ones by a loop (cheaper than a native call). */
const shortString = 64

/**
 * The frame when every string is ASCII (one byte per character): sized from the lengths, written in
 * one pass. Undefined as soon as a string turns out not to be ASCII.
 */
const asciiFrame = (
  prefix: RespPrefix | undefined,
  head: ReadonlyArray<string>,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  bytes: FrameBytes
): Buffer | undefined => {
  const parts = (prefix === undefined ? 0 : prefix.parts) + head.length + keys.length + args.length
  const header = headerLength(parts, prefix)
  let size = header
  for (let i = 0; i < head.length; i++) size += bulkOverhead(head[i]!.length) + head[i]!.length
  for (let i = 0; i < keys.length; i++) size += bulkOverhead(keys[i]!.length) + keys[i]!.length
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!
    const n = typeof a === "string" ? a.length : typeof a === "number" ? numberText(a).length : a.byteLength
    size += bulkOverhead(n) + n
  }
  const out = startFrame(bytes(size), parts, prefix)
  let at = header
  for (let i = 0; i < head.length && at >= 0; i++) at = putAscii(out, at, head[i]!)
  for (let i = 0; i < keys.length && at >= 0; i++) at = putAscii(out, at, keys[i]!)
  for (let i = 0; i < args.length && at >= 0; i++) {
    const a = args[i]!
    if (typeof a === "string") at = putAscii(out, at, a)
    else if (typeof a === "number") at = putAscii(out, at, numberText(a))
    else {
      out[at] = 36 // $
      at = writeDecimal(out, at + 1, a.byteLength)
      out.set(a, at)
      at += a.byteLength
      out[at++] = 13
      out[at++] = 10
    }
  }
  return at < 0 ? undefined : out
}

/** Writes `s` as a bulk string at `at` if it is ASCII; returns the offset after it, or -1 (nothing usable written). */
const putAscii = (out: Buffer, at: number, s: string): number => {
  const n = s.length
  out[at] = 36 // $
  at = writeDecimal(out, at + 1, n)
  if (n > shortString) {
    if (Buffer.byteLength(s) !== n) return -1
    out.write(s, at, "latin1")
  } else if (!copyShortAscii(out, at, s)) return -1
  at += n
  out[at] = 13
  out[at + 1] = 10
  return at + 2
}

/** Copies a short string's characters as bytes at `at` (a loop beats a native write call); false, at the first one above 127, when it is not ASCII. */
const copyShortAscii = (out: Buffer, at: number, s: string): boolean => {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c > 127) return false
    out[at + k] = c
  }
  return true
}

/** Any frame: each string's UTF-8 length measured first, then the bytes written. */
const generalFrame = (
  prefix: RespPrefix | undefined,
  head: ReadonlyArray<string>,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<ScriptArg>,
  bytes: FrameBytes
): Buffer => {
  const parts = head.length + keys.length + args.length
  const total = parts + (prefix === undefined ? 0 : prefix.parts)
  // Pass 1: the size, remembering each string's UTF-8 length (numbers become their text).
  const lengths: Array<number> = new Array(parts)
  const texts: Array<string | Uint8Array> = new Array(parts)
  const header = headerLength(total, prefix)
  let size = header
  let i = 0
  for (const s of head) {
    const n = Buffer.byteLength(s)
    texts[i] = s
    lengths[i++] = n
    size += bulkOverhead(n) + n
  }
  for (const s of keys) {
    const n = Buffer.byteLength(s)
    texts[i] = s
    lengths[i++] = n
    size += bulkOverhead(n) + n
  }
  for (const a of args) {
    let n: number
    if (typeof a === "string") {
      n = Buffer.byteLength(a)
      texts[i] = a
    } else if (typeof a === "number") {
      const t = numberText(a)
      n = t.length
      texts[i] = t
    } else {
      n = a.byteLength
      texts[i] = a
    }
    lengths[i++] = n
    size += bulkOverhead(n) + n
  }
  // Pass 2: the bytes.
  const out = startFrame(bytes(size), total, prefix)
  let at = header
  for (let j = 0; j < parts; j++) {
    const n = lengths[j]!
    const t = texts[j]!
    out[at] = 36 // $
    at = writeDecimal(out, at + 1, n)
    if (typeof t !== "string") {
      out.set(t, at)
      at += n
    } else if (n !== t.length) at += out.write(t, at, "utf8")
    else if (n > shortString) at += out.write(t, at, "latin1")
    else {
      // Short ASCII (equal lengths: every character is one byte).
      copyShortAscii(out, at, t)
      at += n
    }
    out[at++] = 13
    out[at++] = 10
  }
  return out
}

/** Bytes of the `*<parts>\r\n` header and the prefix (if any): where a frame's own parts start. */
const headerLength = (parts: number, prefix: RespPrefix | undefined): number =>
  1 + decimalDigits(parts) + crlf + (prefix === undefined ? 0 : prefix.bytes.length)

/** The frame's bytes `out` with its header and prefix written (the rest is written from `headerLength` on). */
const startFrame = (out: Buffer, parts: number, prefix: RespPrefix | undefined): Buffer => {
  out[0] = 42 // *
  const at = writeDecimal(out, 1, parts)
  if (prefix !== undefined) out.set(prefix.bytes, at)
  return out
}

/** Writes `n` (an integer >= 0) in decimal and `\r\n` at `at`; returns the offset after them. */
const writeDecimal = (out: Buffer, at: number, n: number): number => {
  const digits = decimalDigits(n)
  for (let k = digits - 1; k >= 0; k--) {
    out[at + k] = 48 + (n % 10)
    n = Math.floor(n / 10)
  }
  at += digits
  out[at] = 13
  out[at + 1] = 10
  return at + 2
}
