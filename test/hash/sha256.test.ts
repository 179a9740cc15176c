/** SHA-256 in TypeScript (entry and scheduler ids on every runtime) gives node:crypto's digest of the UTF-8 text. */
import { createHash, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { sha256Hex } from "../../src/hash/sha256.js"

describe("sha256Hex", () => {
  it("matches node:crypto for texts of every length up to 300 characters, non-ASCII included", () => {
    const texts = Array.from({ length: 301 }, (_, n) => randomBytes(n).toString("latin1") + "ü€😀".repeat(n % 4))
    const mismatches = texts
      .filter((t) => sha256Hex(t) !== createHash("sha256").update(t).digest("hex"))
      .map((t) => t.length)
    expect(mismatches).toEqual([])
  })

  it("gives FIPS 180-4's test vectors", () => {
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
  })
})
