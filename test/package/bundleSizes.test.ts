/**
 * The bundle sizes the docs quote are true (issue 29, point 8): README.md and docs/**\/*.md quote
 * them in table rows of one form,
 *
 *   | createClient only (ESM, minified) | 128 KB |
 *
 * whose first cell names one of the bundles below (each ending "(ESM, minified)") and whose second
 * is its size in KB (1024 bytes). Each such row is checked against the bundle built here as a
 * deploy builds it (esbuild: platform node, ESM, minified): the quoted size must be within 10% of
 * the measured one. A row naming a bundle this test does not know fails (a typo would otherwise
 * go unchecked), and the docs must quote the createClient bundle.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../", import.meta.url))
let dir: string
beforeAll(() => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(root, ".tmp", "doc-sizes-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const src = (p: string) => JSON.stringify(join(root, p))

/** The bundles the docs may quote, by the label their row starts with: each a handler's source. */
const bundles: Readonly<Record<string, string>> = {
  "createClient only (ESM, minified)": `import { createClient } from ${src("src/client.ts")}
const client = createClient()
export const handler = async (event: { body: string }) => (await client.enqueue("email:welcome", JSON.parse(event.body))).id`,
  "enqueue-only Lambda handler (ESM, minified)": `import { createEnqueueHandler } from ${src("adapters/aws-lambda/enqueueHandler.ts")}
export const handler = createEnqueueHandler({ auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET! }, allowedQueues: ["default", "email"] })`
}

/** A quoted size: the row's label, its KB, and where it is. */
interface Quote {
  readonly label: string
  readonly kb: number
  readonly where: string
}

const markdownFiles = (d: string): Array<string> =>
  readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(d, e.name)) : e.name.endsWith(".md") ? [join(d, e.name)] : []
  )

/** Every row `| <label> (ESM, minified) | <n> KB |` in README.md and docs/**\/*.md. */
const quotes = (): Array<Quote> => {
  const files = [
    join(root, "README.md"),
    ...(readdirSync(root).includes("docs") ? markdownFiles(join(root, "docs")) : [])
  ]
  const out: Array<Quote> = []
  for (const file of files) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        const m = /^\|\s*([^|]*\(ESM, minified\))\s*\|\s*(\d+(?:\.\d+)?)\s*KB\s*\|/.exec(line)
        if (m) out.push({ label: m[1]!.trim(), kb: Number(m[2]), where: `${relative(root, file)}:${i + 1}` })
      })
  }
  return out
}

const measuredKb = async (label: string): Promise<number> => {
  const entry = join(dir, `${Object.keys(bundles).indexOf(label)}.ts`)
  writeFileSync(entry, bundles[label]!)
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    outfile: `${entry}.mjs`,
    logLevel: "error"
  })
  return out.outputFiles[0]!.contents.byteLength / 1024
}

describe("the bundle sizes the docs quote", () => {
  it("every quoted bundle size is within 10% of the bundle built now, and the docs quote the createClient bundle", async () => {
    const found = quotes()
    expect(
      found.map((q) => q.label),
      "README.md or docs/ quote no `| createClient only (ESM, minified) | <n> KB |` row"
    ).toContain("createClient only (ESM, minified)")
    for (const q of found) {
      expect(Object.keys(bundles), `${q.where} quotes a bundle this test does not build: "${q.label}"`).toContain(
        q.label
      )
      const kb = await measuredKb(q.label)
      expect(
        Math.abs(q.kb - kb) <= kb * 0.1,
        `${q.where} quotes ${q.kb} KB for "${q.label}"; it measures ${kb.toFixed(1)} KB`
      ).toBe(true)
    }
  }, 120_000)
})
