/**
 * Every Lua script documents itself at the top: the transition it performs, its KEYS, its ARGV
 * and what it returns; it names each documented KEYS and ARGV entry in a local at the top and
 * uses those names; and every key it names in KEYS is used through KEYS (no key built from ARGV
 * alone, so the script stays within the keys Redis Cluster routes it by). Every fragment under
 * lua/includes/ documents what it defines and returns, and reads no KEYS or ARGV of its own.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { luaSources } from "../../src/redis/lua.generated.js"

const dir = fileURLToPath(new URL("../../lua", import.meta.url))
const scripts = readdirSync(dir)
  .filter((f) => f.endsWith(".lua"))
  .sort()
const fragments = readdirSync(join(dir, "includes"))
  .filter((f) => f.endsWith(".lua"))
  .sort()

/** The leading comment lines of a Lua file, and the code after them. */
const split = (src: string) => {
  const lines = src.split("\n")
  const header: Array<string> = []
  for (const line of lines) {
    if (!line.startsWith("--")) break
    header.push(line)
  }
  return { header, text: header.join("\n"), code: lines.slice(header.length).join("\n") }
}

/** How many leading entries of KEYS or ARGV the header documents one by one (ARGV[2..] is not one). */
const documented = (header: string, array: "KEYS" | "ARGV") => {
  let count = 0
  for (const m of header.matchAll(new RegExp(`^-- ${array}\\[(\\d+)\\](?!\\s*(?:\\.\\.|,))`, "gm"))) {
    count = Math.max(count, Number(m[1]))
  }
  return count
}

/** The statements naming KEYS or ARGV entries: `local a, b = unpack(KEYS)` or `local a = KEYS[1]`. */
const namingStatement = (array: "KEYS" | "ARGV") =>
  new RegExp(`^local ([\\w\\s,]+?) = (?:unpack\\(${array}\\)|${array}\\[\\d+\\](?:, ${array}\\[\\d+\\])*)$`, "gm")

describe("lua/*.lua", () => {
  it("are all embedded in the library", () => {
    expect(Object.keys(luaSources).sort()).toEqual(scripts.map((f) => f.slice(0, -4)))
  })

  it.each(scripts)("%s starts with a header naming it and documenting KEYS, ARGV and the return value", (file) => {
    const { code, header, text } = split(readFileSync(join(dir, file), "utf8"))
    expect(header[0]).toMatch(new RegExp(`^-- ${file.slice(0, -4)}\\b`))
    expect(text).toMatch(/KEYS/)
    expect(text).toMatch(/ARGV/)
    expect(text).toMatch(/Returns?/)
    // The code after the header never calls redis with a key it made from ARGV alone.
    expect(code).not.toMatch(/redis\.call\(\s*"[A-Z]+"\s*,\s*ARGV\[/)
  })

  it.each(scripts)("%s names every documented KEYS and ARGV entry at the top and uses the names", (file) => {
    const { code, text } = split(readFileSync(join(dir, file), "utf8"))
    const body = code.replace(/\n\s+/g, " ") // a naming statement may wrap its names
    const names = (array: "KEYS" | "ARGV") =>
      [...body.matchAll(namingStatement(array))].flatMap((m) => m[1]!.split(",").map((n) => n.trim()))
    expect(names("KEYS")).toHaveLength(documented(text, "KEYS"))
    expect(names("ARGV")).toHaveLength(documented(text, "ARGV"))
    // Past the naming statements, no entry is read by its number (a loop over ARGV[i] is fine).
    const rest = body.replace(namingStatement("KEYS"), "").replace(namingStatement("ARGV"), "")
    expect(rest).not.toMatch(/\b(?:KEYS|ARGV)\[\d/)
    // A name given to an ARGV entry is never the key of a redis call.
    for (const name of names("ARGV")) {
      expect(code).not.toMatch(new RegExp(`redis\\.call\\(\\s*"[A-Z]+"\\s*,\\s*${name}\\s*[,)]`))
    }
  })
})

describe("lua/includes/*.lua", () => {
  it.each(fragments)(
    "%s starts with a header saying what it defines and returns, and reads no KEYS or ARGV",
    (file) => {
      const { code, text } = split(readFileSync(join(dir, "includes", file), "utf8"))
      expect(text).toMatch(new RegExp(`^-- includes/${file}: `))
      expect(text).toMatch(/Defines \w+\(/)
      expect(text).toMatch(/Returns/)
      expect(code).not.toMatch(/\b(?:KEYS|ARGV)\b/)
      expect(code).toMatch(/^local function \w+\(/m)
    }
  )
})
