// Types of lua/includes.mjs (for the tests that import it).
export declare const includesFolder: string
export declare class LuaIncludeError extends Error {}
export declare const expandLuaScript: (
  luaDir: string,
  file: string
) => { readonly source: string; readonly includes: ReadonlyArray<string> }
export declare const expandLuaScriptLines: (
  luaDir: string,
  file: string
) => {
  readonly lines: ReadonlyArray<{ readonly text: string; readonly origin: string }>
  readonly includes: ReadonlyArray<string>
}
