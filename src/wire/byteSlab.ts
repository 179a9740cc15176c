/**
 * Small byte arrays carved out of shared slabs, as Node carves small Buffers out of its pool, but
 * with plain Uint8Arrays (no Node API: the wire code also runs on edge runtimes).
 *
 * V8 keeps a typed array of more than 64 bytes outside the JS heap: `new Uint8Array(n)` is a
 * malloc, a zeroing, and a sweeper pass and a free when it dies. An encoded TaskMessage (about 100
 * bytes) and its payload are made once per enqueued task, so that cost was paid per task; a view
 * into a slab costs only the view object. A slab is freed when no view into it is left, so a kept
 * view keeps its whole slab (16 KB) alive: meant for bytes that live about as long as the task
 * they belong to, not for long-lived caches.
 *
 * The bytes handed out are zeros, as from `new Uint8Array(n)`: a fresh slab is zeroed and each of
 * its bytes is handed out once.
 */

const slabSize = 16 * 1024
/** Arrays longer than this get their own `new Uint8Array` (a few per slab at most would fit). */
export const maxSlabBytes = 2048

let slab = new ArrayBuffer(slabSize)
let used = 0

/** Where the next array starts after one of `size` bytes (kept 8-byte aligned). */
const aligned = (size: number): number => (size + 7) & ~7

/** Makes sure `room` bytes are free in the current slab (a new slab when they are not); returns where they start. */
const reserve = (room: number): number => {
  if (used + room > slabSize) {
    slab = new ArrayBuffer(slabSize)
    used = 0
  }
  return used
}

/** `size` zeroed bytes: a view into the current slab (a new slab when it is full), or their own array past `maxSlabBytes`. */
export const slabBytes = (size: number): Uint8Array => {
  if (size > maxSlabBytes) return new Uint8Array(size)
  const start = reserve(size) // first: it may replace `slab`
  const out = new Uint8Array(slab, start, size)
  used += aligned(size)
  return out
}

/** A copy of `src` (as `slabBytes` places it). */
export const slabCopy = (src: Uint8Array): Uint8Array => {
  const out = slabBytes(src.length)
  out.set(src)
  return out
}

/**
 * A buffer may be kept alive by a view into it when it is at most this many times the view's size:
 * a large payload read in place out of a socket chunk (64 KB at most) keeps at most 8× its bytes
 * alive, and only as long as its task is in hand.
 */
const keptViewRatio = 8

/** A copy of a long array with no zeroing first (`%TypedArray%.prototype.slice`: one allocation and one copy). */
const plainCopy = (src: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(src)

/**
 * Bytes read out of a larger buffer (a field of a message that may sit in a socket chunk), to keep:
 * a long one (more than `maxSlabBytes`) as the view itself when its buffer is at most 8× its size
 * (a large payload in a socket chunk: a copy would cost as much as reading it, and keeping the
 * view keeps little else alive), else a copy (a short one into a slab, a long one on its own).
 */
export const keptBytes = (src: Uint8Array): Uint8Array => {
  if (src.length <= maxSlabBytes) return slabCopy(src)
  return src.buffer.byteLength <= keptViewRatio * src.length ? src : plainCopy(src)
}

const utf8 = new TextEncoder()

/**
 * The UTF-8 bytes of `s` (lone surrogates as U+FFFD, as TextEncoder writes them) straight into the slab (no copy), when its longest
 * form (3 bytes per UTF-16 unit) fits `maxSlabBytes`; undefined otherwise (the caller encodes it
 * on its own).
 */
export const slabUtf8 = (s: string): Uint8Array | undefined => {
  const room = 3 * s.length
  if (room > maxSlabBytes) return undefined
  const start = reserve(room)
  const written = utf8.encodeInto(s, new Uint8Array(slab, start, room)).written
  used += aligned(written)
  return new Uint8Array(slab, start, written)
}
