/** MD5 in TypeScript (uniqueness keys on every runtime) gives node:crypto's digest, across block boundaries. */
import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { md5Hex } from "../../src/hash/md5.js"

describe("md5Hex", () => {
  it("matches node:crypto for every length from 0 to 300 bytes and for 1 MB", () => {
    const inputs = [...Array.from({ length: 301 }, (_, n) => randomBytes(n)), randomBytes(1 << 20)]
    const mismatches = inputs
      .filter((b) => md5Hex(b) !== createHash("md5").update(b).digest("hex"))
      .map((b) => b.length)
    expect(mismatches).toEqual([])
  })

  it("gives RFC 1321's test vectors", () => {
    const text = (s: string) => md5Hex(new TextEncoder().encode(s))
    expect(text("")).toBe("d41d8cd98f00b204e9800998ecf8427e")
    expect(text("abc")).toBe("900150983cd24fb0d6963f7d28e17f72")
    expect(text("12345678901234567890123456789012345678901234567890123456789012345678901234567890")).toBe(
      "57edf4a22be3c955ac49da2e2107b67a"
    )
  })
})
