/**
 * lua/embed.mjs resolves `--- @include "includes/<name>.lua"` lines when it embeds the scripts:
 * what is embedded has no include left, every fragment serves some script, and a missing or
 * circular include fails the build with a message naming the file, the line and the path.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { luaSourcesOf } from "../../lua/embed.mjs"
import { expandLuaScript } from "../../lua/includes.mjs"
import { luaSources } from "../../src/redis/lua.generated.js"

const luaDir = fileURLToPath(new URL("../../lua", import.meta.url))
const embedScript = join(luaDir, "embed.mjs")
const scripts = readdirSync(luaDir)
  .filter((f) => f.endsWith(".lua"))
  .sort()

/** Runs `node lua/embed.mjs dir out` and says how it ended. */
const embed = (dir: string, out: string) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [embedScript, dir, out], (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stderr })
    })
  })

const temporary: Array<string> = []
afterEach(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temporary Lua folder holding `files` (path relative to it -> text). */
const luaFolder = (files: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "lua-embed-"))
  temporary.push(dir)
  mkdirSync(join(dir, "includes"))
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text)
  return dir
}

describe("the embedded scripts", () => {
  it("are the scripts of lua/ with every include resolved", () => {
    expect(luaSourcesOf(luaDir)).toEqual(luaSources)
    for (const source of Object.values(luaSources)) expect(source).not.toMatch(/@include/)
  })

  it("use every fragment under lua/includes/", () => {
    const used = new Set(scripts.flatMap((f) => expandLuaScript(luaDir, f).includes))
    const fragments = readdirSync(join(luaDir, "includes")).filter((f) => f.endsWith(".lua"))
    expect(fragments.length).toBeGreaterThan(0)
    for (const fragment of fragments) expect(used).toContain(`includes/${fragment}`)
  })
})

describe("lua/embed.mjs includes", () => {
  it("pastes fragments recursively, once per script, and strips their comments", async () => {
    const dir = luaFolder({
      "s.lua": '-- s: test script\n--- @include "includes/a.lua"\n--- @include "includes/b.lua"\nreturn a() + b()\n',
      "includes/a.lua": "-- includes/a.lua: a\nlocal function a()\n  return 1\nend\n",
      "includes/b.lua": '-- includes/b.lua: b\n--- @include "includes/a.lua"\nlocal function b()\n  return a()\nend\n'
    })
    expect(expandLuaScript(dir, "s.lua").includes).toEqual(["includes/a.lua", "includes/b.lua"])
    expect(luaSourcesOf(dir)).toEqual({
      s: "-- s: test script\nlocal function a()\n  return 1\nend\nlocal function b()\n  return a()\nend\nreturn a() + b()\n"
    })
    const out = join(dir, "out.ts")
    expect(await embed(dir, out)).toEqual({ code: 0, stderr: "" })
    expect(existsSync(out)).toBe(true)
  })

  it("fails the build on a missing include, naming the file, the line and the path", async () => {
    const dir = luaFolder({ "s.lua": '-- s: test script\nlocal x = 1\n--- @include "includes/nope.lua"\nreturn x\n' })
    const out = join(dir, "out.ts")
    const result = await embed(dir, out)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain('s.lua:3: missing include "includes/nope.lua"')
    expect(existsSync(out)).toBe(false)
  })

  it("fails the build on a circular include, naming the file, the line and the chain", async () => {
    const dir = luaFolder({
      "s.lua": '-- s: test script\n--- @include "includes/a.lua"\nreturn 1\n',
      "includes/a.lua": '-- includes/a.lua: a\n--- @include "includes/b.lua"\n',
      "includes/b.lua": '-- includes/b.lua: b\nlocal y = 2\n--- @include "includes/a.lua"\n'
    })
    const out = join(dir, "out.ts")
    const result = await embed(dir, out)
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      'includes/b.lua:3: circular include "includes/a.lua" (s.lua -> includes/a.lua -> includes/b.lua -> includes/a.lua)'
    )
    expect(existsSync(out)).toBe(false)
  })

  it("fails the build on an include line of another form", async () => {
    const dir = luaFolder({
      "s.lua": '-- s: test script\n--- @include "includes/a"\nreturn 1\n',
      "includes/a.lua": "-- includes/a.lua: a\n"
    })
    const result = await embed(dir, join(dir, "out.ts"))
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("s.lua:2: malformed include line")
  })
})
