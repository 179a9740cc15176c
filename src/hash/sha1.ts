/**
 * SHA-1 (FIPS 180-4) of a string's UTF-8 bytes, as lowercase hex: the name Redis gives a script
 * (EVALSHA). Written in plain TypeScript because the script registry is on every runtime's path,
 * edge runtimes included, where `node:crypto` does not exist and Web Crypto's digest is asynchronous.
 */
import { paddedBlocks } from "./padding.js"
const encoder = new TextEncoder()
const rotl = (x: number, n: number) => (x << n) | (x >>> (32 - n))
const hex8 = (x: number) => (x >>> 0).toString(16).padStart(8, "0")

export const sha1Hex = (text: string): string => {
  const view = paddedBlocks(encoder.encode(text), false)
  let h0 = 0x67452301
  let h1 = 0xefcdab89
  let h2 = 0x98badcfe
  let h3 = 0x10325476
  let h4 = 0xc3d2e1f0
  const w = new Int32Array(80)
  for (let off = 0; off < view.byteLength; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(off + 4 * i)
    for (let i = 16; i < 80; i++) w[i] = rotl(w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!, 1)
    let a = h0
    let b = h1
    let c = h2
    let d = h3
    let e = h4
    for (let i = 0; i < 80; i++) {
      const [f, k] =
        i < 20
          ? [(b & c) | (~b & d), 0x5a827999]
          : i < 40
            ? [b ^ c ^ d, 0x6ed9eba1]
            : i < 60
              ? [(b & c) | (b & d) | (c & d), 0x8f1bbcdc]
              : [b ^ c ^ d, 0xca62c1d6]
      const t = (rotl(a, 5) + f + e + k + w[i]!) | 0
      e = d
      d = c
      c = rotl(b, 30)
      b = a
      a = t
    }
    h0 = (h0 + a) | 0
    h1 = (h1 + b) | 0
    h2 = (h2 + c) | 0
    h3 = (h3 + d) | 0
    h4 = (h4 + e) | 0
  }
  return hex8(h0) + hex8(h1) + hex8(h2) + hex8(h3) + hex8(h4)
}
