// Types of adapters/dashboard/browser/embed.mjs (for the tests that import it; importing it writes nothing).
export declare const bundleApp: () => Promise<string>
export declare const generatedModule: (script: string) => string
