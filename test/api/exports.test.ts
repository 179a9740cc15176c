/**
 * The root module's public surface: at most 60 names, exactly the ones docs/api.md
 * lists, no internals (codec helpers, ioredis plumbing, untraced variants), and no exported function
 * name, as code writes it (`createClient`, `Steps.enqueue`), shared by two different things across
 * the package's entry points.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** The names listed as `- \`Name\`` (and after a comma) in docs/api.md ("API: what effect-asynq exports"), before "Subpath". */
const readmeNames = (): Array<string> => {
  const text = readFileSync(`${root}/docs/api.md`, "utf8")
  const start = text.indexOf("# API: what `effect-asynq` exports")
  const end = text.indexOf("Subpath entry points", start)
  expect(start).toBeGreaterThanOrEqual(0)
  const names: Array<string> = []
  for (const line of text.slice(start, end).split("\n")) {
    if (!line.startsWith("- `")) continue
    const head = line.slice(2).split(" — ")[0]!
    for (const m of head.matchAll(/`([A-Za-z]+)`/g)) names.push(m[1]!)
  }
  return names
}

const internals = [
  "enqueueUntraced",
  "enqueueManyUntraced",
  "toInt64",
  "makeRedis",
  "acquireClient",
  "goQuote",
  "goJson",
  "readMapEntry",
  "writeStringMap",
  "readTimestamp",
  "writeTimestamp",
  "resolveEnqueueOptions",
  "decodeStored",
  "setAsideCorrupt",
  "dequeueLeaseCall",
  "resolveOptions",
  "queueOrder",
  "computeDeadlineMs"
]

/**
 * Every value a module exports, walking into namespace objects: `name` is the bare name
 * (`Steps.enqueue` → "enqueue"), `qualified` the name as code writes it ("Steps.enqueue").
 */
const exportedValues = (
  mod: Record<string, unknown>,
  where: string,
  out: Array<{ name: string; qualified: string; value: unknown; where: string }>,
  namespace = ""
) => {
  for (const [name, value] of Object.entries(mod)) {
    if (value !== null && typeof value === "object" && Object.prototype.toString.call(value) === "[object Module]") {
      exportedValues(value as Record<string, unknown>, `${where} ${name}.`, out, `${namespace}${name}.`)
    } else out.push({ name, qualified: `${namespace}${name}`, value, where: `${where} ${name}` })
  }
  return out
}

describe("effect-asynq's root exports", () => {
  it("are at most 60 names, exactly the list in docs/api.md, with no internals", async () => {
    const mod = await import("../../src/index.js")
    const names = Object.keys(mod).sort()
    expect(names.length).toBeLessThanOrEqual(60)
    expect(names).toEqual([...new Set(readmeNames())].sort())
    const all = exportedValues(mod as Record<string, unknown>, "effect-asynq", []).map((e) => e.name)
    for (const name of internals) expect(all, `${name} must not be exported`).not.toContain(name)
  })

  it("no function name is exported for two different things by any entry point", async () => {
    // Every entry point package.json exports (its source file), so a new one cannot be left out.
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as {
      exports: Record<string, string | { default?: string }>
    }
    const files = Object.values(pkg.exports).flatMap((target) => {
      const js = typeof target === "string" ? target : target.default
      return js?.startsWith("./dist/") && js.endsWith(".js") ? [js.slice("./dist/".length, -".js".length) + ".ts"] : []
    })
    expect(files).toContain("src/workflow/index.ts")
    expect(files).toContain("adapters/aws-lambda/dashboardHandler.ts")
    // Deliberate: the same API under another entry point, where the import path says which one.
    const sameApiElsewhere = new Set([
      // effect-asynq/edge's client: createClient's API over an HTTP (REST) gateway
      "createClient: src/client.ts createClient vs src/edge/index.ts createClient"
    ])
    const seen = new Map<string, { value: unknown; where: string }>()
    const clashes: Array<string> = []
    for (const file of files) {
      const mod = (await import(`${root}/${file}`)) as Record<string, unknown>
      for (const e of exportedValues(mod, file, [])) {
        if (typeof e.value !== "function") continue
        const first = seen.get(e.qualified)
        if (first === undefined) seen.set(e.qualified, { value: e.value, where: e.where })
        else if (first.value !== e.value) clashes.push(`${e.qualified}: ${first.where} vs ${e.where}`)
      }
    }
    expect(clashes.filter((c) => !sameApiElsewhere.has(c))).toEqual([])
  }, 60_000)
})
