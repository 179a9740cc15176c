import { createHash } from "node:crypto"
import { type LuaName, luaSources } from "./lua.generated.js"

/** A Lua script from `lua/`, with the SHA1 Redis knows it by. */
export interface LuaScript {
  readonly name: LuaName
  readonly source: string
  readonly sha: string
}

const cache = new Map<LuaName, LuaScript>()

/** The script `lua/<name>.lua` (embedded at build time by lua/embed.mjs). */
export const luaScript = (name: LuaName): LuaScript => {
  let s = cache.get(name)
  if (!s) {
    const source = luaSources[name]
    s = { name, source, sha: createHash("sha1").update(source).digest("hex") }
    cache.set(name, s)
  }
  return s
}

export type { LuaName }
