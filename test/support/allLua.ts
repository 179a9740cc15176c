/**
 * Registers every embedded Lua script by name, for tests that call the Redis service's `script`
 * or `scriptBatch` with a bare name (library code registers each script through its descriptor).
 * Importing this module registers them.
 */
import { type LuaName, luaSources } from "../../src/redis/lua.generated.js"
import { registerLua } from "../../src/redis/scripts.js"

for (const [name, source] of Object.entries(luaSources)) registerLua(name as LuaName, source)
