import type { LuaName } from "./lua.generated.js"
import { sha1Hex } from "../hash/sha1.js"

/** A Lua script from `lua/`, with the SHA1 Redis knows it by. */
export interface LuaScript {
  readonly name: LuaName
  readonly source: string
  readonly sha: string
}

/**
 * The scripts this program can run, by name: each script descriptor (src/broker, `defineScript`)
 * registers its source, imported from src/redis/lua.generated.ts one constant per script, so a
 * bundle carries only the scripts its code uses.
 */
const sources = new Map<LuaName, string>()
const cache = new Map<LuaName, LuaScript>()

/** Makes `lua/<name>.lua` runnable by name (its embedded source). Registering the same source again is a no-op. */
export const registerLua = (name: LuaName, source: string): void => {
  const known = sources.get(name)
  if (known === source) return
  sources.set(name, source)
  cache.delete(name)
}

/** The script `lua/<name>.lua`; throws when no code of this program registered it (a bug: the descriptor was not imported). */
export const luaScript = (name: LuaName): LuaScript => {
  let s = cache.get(name)
  if (!s) {
    const source = sources.get(name)
    if (source === undefined)
      throw new Error(
        `Lua script "${name}" is not registered: import its descriptor (src/broker) or call registerLua("${name}", ${name}Lua)`
      )
    s = { name, source, sha: sha1Hex(source) }
    cache.set(name, s)
  }
  return s
}

export type { LuaName }
