// Types of lua/embed.mjs (for the tests that import it; importing it writes nothing).
export declare const luaSourcesOf: (luaDir: string) => Record<string, string>
export declare const generatedModule: (luaDir: string) => string
