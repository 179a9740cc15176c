/** SHA-1 in TypeScript (the script names EVALSHA uses, on every runtime) gives node:crypto's digest of the UTF-8 text, and Redis's own. */
import { createHash, randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { sha1Hex } from "../../src/hash/sha1.js"
import { luaSources } from "../../src/redis/lua.generated.js"
import { rawClient } from "../support/redis.js"

const c = rawClient()
afterAll(() => c.disconnect())

describe("sha1Hex", () => {
  it("matches node:crypto for texts of every length up to 300 characters, non-ASCII included", () => {
    const texts = Array.from({ length: 301 }, (_, n) => randomBytes(n).toString("latin1") + "ü€😀".repeat(n % 4))
    const mismatches = texts
      .filter((t) => sha1Hex(t) !== createHash("sha1").update(t).digest("hex"))
      .map((t) => t.length)
    expect(mismatches).toEqual([])
  })

  it("gives FIPS 180-4's test vectors", () => {
    expect(sha1Hex("abc")).toBe("a9993e364706816aba3e25717850c26c9cd0d89d")
    expect(sha1Hex("")).toBe("da39a3ee5e6b4b0d3255bfef95601890afd80709")
  })

  it("names every embedded script as Redis does (SCRIPT LOAD's reply)", async () => {
    for (const source of Object.values(luaSources)) expect(sha1Hex(source)).toBe(await c.script("LOAD", source))
  })
})
