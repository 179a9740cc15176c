/**
 * The root module's public surface: at most 60 names, exactly the ones docs/api.md
 * lists, no internals (codec helpers, ioredis plumbing, untraced variants), and no exported function
 * name shared by two different things across the package's entry points.
 */
import { readdirSync, readFileSync } from "node:fs"
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

/** Every value a module exports, walking into namespace objects (`Steps.enqueue` → "enqueue"). */
const exportedValues = (
  mod: Record<string, unknown>,
  where: string,
  out: Array<{ name: string; value: unknown; where: string }>
) => {
  for (const [name, value] of Object.entries(mod)) {
    if (value !== null && typeof value === "object" && Object.prototype.toString.call(value) === "[object Module]") {
      exportedValues(value as Record<string, unknown>, `${where} ${name}.`, out)
    } else out.push({ name, value, where: `${where} ${name}` })
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
    const files = [
      "src/index.ts",
      "src/client.ts",
      "adapters/worker/index.ts",
      "adapters/serverless/index.ts",
      "src/inspector/index.ts",
      "src/scheduler/index.ts",
      "src/wire/index.ts",
      "adapters/dashboard/index.ts",
      ...readdirSync(`${root}/adapters/aws-lambda`)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => `adapters/aws-lambda/${f}`),
      ...readdirSync(`${root}/adapters/gcp-functions`)
        .filter((f) => f.endsWith(".ts"))
        .map((f) => `adapters/gcp-functions/${f}`)
    ]
    const seen = new Map<string, { value: unknown; where: string }>()
    const clashes: Array<string> = []
    for (const file of files) {
      const mod = (await import(`${root}/${file}`)) as Record<string, unknown>
      for (const e of exportedValues(mod, file, [])) {
        if (typeof e.value !== "function") continue
        const first = seen.get(e.name)
        if (first === undefined) seen.set(e.name, { value: e.value, where: e.where })
        else if (first.value !== e.value) clashes.push(`${e.name}: ${first.where} vs ${e.where}`)
      }
    }
    expect(clashes).toEqual([])
  }, 60_000)
})
