/**
 * MD5 (RFC 1321) of bytes, as lowercase hex: asynq's uniqueness keys hash the payload with it.
 * Written in plain TypeScript because Web Crypto has no MD5 and `node:crypto` does not exist in
 * edge runtimes; the uniqueness key is built where a task is created, on any runtime.
 */

import { paddedBlocks } from "./padding.js"

// K[i] = floor(|sin(i + 1)| · 2^32) (exact in double precision).
const K = Array.from({ length: 64 }, (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 4294967296) | 0)
const S = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]

const hex = (n: number): string => {
  let out = ""
  for (let i = 0; i < 4; i++) out += ((n >>> (8 * i)) & 0xff).toString(16).padStart(2, "0")
  return out
}

export const md5Hex = (data: Uint8Array): string => {
  const view = paddedBlocks(data, true)
  let a0 = 0x67452301
  let b0 = 0xefcdab89 | 0
  let c0 = 0x98badcfe | 0
  let d0 = 0x10325476
  const M = new Int32Array(16)
  for (let off = 0; off < view.byteLength; off += 64) {
    for (let j = 0; j < 16; j++) M[j] = view.getInt32(off + 4 * j, true)
    let a = a0
    let b = b0
    let c = c0
    let d = d0
    for (let i = 0; i < 64; i++) {
      let f: number
      let g: number
      if (i < 16) {
        f = (b & c) | (~b & d)
        g = i
      } else if (i < 32) {
        f = (d & b) | (~d & c)
        g = (5 * i + 1) & 15
      } else if (i < 48) {
        f = b ^ c ^ d
        g = (3 * i + 5) & 15
      } else {
        f = c ^ (b | ~d)
        g = (7 * i) & 15
      }
      f = (f + a + K[i]! + M[g]!) | 0
      a = d
      d = c
      c = b
      const s = S[(i >>> 4) * 4 + (i & 3)]!
      b = (b + ((f << s) | (f >>> (32 - s)))) | 0
    }
    a0 = (a0 + a) | 0
    b0 = (b0 + b) | 0
    c0 = (c0 + c) | 0
    d0 = (d0 + d) | 0
  }
  return hex(a0) + hex(b0) + hex(c0) + hex(d0)
}
