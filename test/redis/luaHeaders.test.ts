/**
 * Every Lua script documents itself at the top: the transition it performs, its KEYS, its ARGV
 * and what it returns; and every key it names in KEYS is used through KEYS (no key built from
 * ARGV alone, so the script stays within the keys Redis Cluster routes it by).
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { luaSources } from "../../src/redis/lua.generated.js"

const dir = fileURLToPath(new URL("../../lua", import.meta.url))
const scripts = readdirSync(dir).filter((f) => f.endsWith(".lua")).sort()

describe("lua/*.lua", () => {
  it("are all embedded in the library", () => {
    expect(Object.keys(luaSources).sort()).toEqual(scripts.map((f) => f.slice(0, -4)))
  })

  it.each(scripts)("%s starts with a header naming it and documenting KEYS, ARGV and the return value", (file) => {
    const src = readFileSync(join(dir, file), "utf8")
    const header: Array<string> = []
    for (const line of src.split("\n")) {
      if (!line.startsWith("--")) break
      header.push(line)
    }
    const text = header.join("\n")
    expect(header[0]).toMatch(new RegExp(`^-- ${file.slice(0, -4)}\\b`))
    expect(text).toMatch(/KEYS/)
    expect(text).toMatch(/ARGV/)
    expect(text).toMatch(/Returns?/)
    // The code after the header never calls redis with a key it made from ARGV alone.
    const code = src.split("\n").slice(header.length).join("\n")
    expect(code).not.toMatch(/redis\.call\(\s*"[A-Z]+"\s*,\s*ARGV\[/)
  })
})
