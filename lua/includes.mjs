// Resolves the include lines of a Lua script, so a block several scripts share is written once,
// in a fragment under lua/includes/, and pasted into each script when lua/embed.mjs embeds it.
//
// An include line has exactly this form (the path is relative to the Lua folder, .lua suffix
// included, so it names the file as it is on disk):
//
//   --- @include "includes/<name>.lua"
//
// The line is replaced by the fragment's text (the fragment's own comments go with it; embed.mjs
// strips comment lines afterwards). Fragments may include fragments. A fragment is pasted once
// per script: a later include of one already pasted is dropped (its `local function`s are in
// scope already). A malformed include line, a missing fragment or a circular include throws a
// LuaIncludeError naming the including file, the line number and the path.
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"

/** The folder, under the Lua folder, that holds the fragments (not scripts themselves). */
export const includesFolder = "includes"

const includeMarker = /^\s*---\s*@include\b/
const includeLine = /^\s*---\s*@include\s+"(includes\/(?:[A-Za-z0-9_-]+\/)*[A-Za-z0-9_-]+\.lua)"\s*$/

/** A script whose includes cannot be resolved (the build fails with this message). */
export class LuaIncludeError extends Error {
  constructor(message) {
    super(message)
    this.name = "LuaIncludeError"
  }
}

/**
 * The text of `file` (a path relative to `luaDir`, e.g. "archive.lua") with every include line
 * replaced by its fragment, recursively, and the fragments it pasted, in order of first use.
 */
export const expandLuaScript = (luaDir, file) => {
  const { lines, includes } = expandLuaScriptLines(luaDir, file)
  return { source: lines.map((l) => l.text).join("\n"), includes }
}

/**
 * `expandLuaScript` line by line: each line with where it comes from (`origin`: the file and which
 * stretch of it between include lines, e.g. "includes/newTask.lua#1"), so lua/embed.mjs can store a
 * stretch several scripts share once.
 */
export const expandLuaScriptLines = (luaDir, file) => {
  const pasted = []
  const lines = expand(luaDir, file, [file], pasted)
  return { lines, includes: pasted }
}

const expand = (luaDir, file, chain, pasted) => {
  const text = readFileSync(join(luaDir, file), "utf8")
  // A fragment's final newline would leave a blank line where the include line was.
  const lines = (chain.length > 1 ? text.replace(/\n$/, "") : text).split("\n")
  const out = []
  let stretch = 0
  lines.forEach((line, index) => {
    if (!includeMarker.test(line)) {
      out.push({ text: line, origin: `${file}#${stretch}` })
      return
    }
    stretch++
    const where = `${file}:${index + 1}`
    const match = includeLine.exec(line)
    if (!match) {
      throw new LuaIncludeError(
        `${where}: malformed include line ${JSON.stringify(line.trim())}; write --- @include "includes/<name>.lua"`
      )
    }
    const path = match[1]
    if (chain.includes(path)) {
      throw new LuaIncludeError(`${where}: circular include "${path}" (${[...chain, path].join(" -> ")})`)
    }
    if (!existsSync(join(luaDir, path))) {
      throw new LuaIncludeError(`${where}: missing include "${path}" (no file ${join(luaDir, path)})`)
    }
    if (pasted.includes(path)) return
    pasted.push(path)
    out.push(...expand(luaDir, path, [...chain, path], pasted))
  })
  return out
}
