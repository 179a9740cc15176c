/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex: the stable entry ids and the
 * cron-function scheduler id hash with it. Written in plain TypeScript because Web Crypto's digest
 * is asynchronous and `node:crypto` does not exist in edge runtimes, where the scheduler tick also runs.
 */
import { paddedBlocks } from "./padding.js"

const primes: Array<number> = []
for (let n = 2; primes.length < 64; n++) if (primes.every((p) => n % p !== 0)) primes.push(n)
/** The first 32 bits of the fractional part of x. */
const fraction32 = (x: number) => ((x - Math.floor(x)) * 4294967296) | 0
// K: cube roots of the first 64 primes; H: square roots of the first 8 (exact in double precision).
const K = primes.map((p) => fraction32(Math.cbrt(p)))
const H = primes.slice(0, 8).map((p) => fraction32(Math.sqrt(p)))

const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n))
const encoder = new TextEncoder()

/** The eight 32-bit words of the SHA-256 of `data`. */
const sha256Words = (data: Uint8Array): Array<number> => {
  const view = paddedBlocks(data, false)
  const h = H.slice()
  const w = new Int32Array(64)
  for (let off = 0; off < view.byteLength; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(off + 4 * i)
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15]!
      const b = w[i - 2]!
      w[i] =
        (w[i - 16]! + (rotr(a, 7) ^ rotr(a, 18) ^ (a >>> 3)) + w[i - 7]! + (rotr(b, 17) ^ rotr(b, 19) ^ (b >>> 10))) | 0
    }
    let [a, b, c, d, e, f, g, hh] = h as [number, number, number, number, number, number, number, number]
    for (let i = 0; i < 64; i++) {
      const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0
      hh = g
      g = f
      f = e
      e = (d + t1) | 0
      d = c
      c = b
      b = a
      a = (t1 + t2) | 0
    }
    h[0] = (h[0]! + a) | 0
    h[1] = (h[1]! + b) | 0
    h[2] = (h[2]! + c) | 0
    h[3] = (h[3]! + d) | 0
    h[4] = (h[4]! + e) | 0
    h[5] = (h[5]! + f) | 0
    h[6] = (h[6]! + g) | 0
    h[7] = (h[7]! + hh) | 0
  }
  return h
}

export const sha256Hex = (text: string): string =>
  sha256Words(encoder.encode(text))
    .map((x) => (x >>> 0).toString(16).padStart(8, "0"))
    .join("")

/** SHA-256 of bytes, as the 32 bytes of the digest. */
export const sha256Bytes = (data: Uint8Array): Uint8Array => {
  const out = new Uint8Array(32)
  const view = new DataView(out.buffer)
  sha256Words(data).forEach((x, i) => view.setInt32(4 * i, x))
  return out
}
