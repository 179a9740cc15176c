/**
 * The layers hold: every import of a file under src/ or adapters/ (static, dynamic, `export … from`,
 * type-only ones included) points into the file's own layer or one above it, in the order the
 * architecture guide's layer map lists them (docs/architecture.md, "The layer map": the first word
 * of each line of its code block). The order is written only there; this test reads it.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** The layer paths of the map, top (lowest) first: `src/hash/`, `src/wire/`, …, `src/client.ts`, `adapters/cli/`. */
const layerOrder = (guide: string): Array<string> => {
  const section = guide.split(/^## /m).find((s) => s.startsWith("The layer map"))
  if (section === undefined) throw new Error('docs/architecture.md has no "## The layer map" section')
  const block = /^```\n([\s\S]*?)^```/m.exec(section)
  if (block === null) throw new Error("the layer map has no code block")
  return block[1]!
    .split("\n")
    .filter((line) => /^\S/.test(line))
    .map((line) => line.split(/\s/)[0]!)
}

/** The layer (the longest listed path that holds it) of a repository path, or undefined. */
const layerOf = (layers: ReadonlyArray<string>, path: string): string | undefined =>
  layers.filter((l) => (l.endsWith("/") ? path.startsWith(l) : path === l)).sort((a, b) => b.length - a.length)[0]

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(`${dir}/${e.name}`)
      : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")
        ? [`${dir}/${e.name}`]
        : []
  )

/** The repository paths a file imports by a relative specifier (a `.js` specifier names its `.ts` source). */
const importsOf = (file: string): Array<string> =>
  ts
    .preProcessFile(readFileSync(join(root, file), "utf8"), true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) =>
      relative(root, resolve(dirname(join(root, file)), spec))
        .split(sep)
        .join("/")
        .replace(/\.js$/, ".ts")
    )

/** Every import against the order, as `file → imported (layer → layer)`, and every file in no layer. */
const layerViolations = (
  layers: ReadonlyArray<string>,
  files: ReadonlyArray<string>,
  importsOfFile: (file: string) => ReadonlyArray<string>
) => {
  const rank = (path: string) => {
    const layer = layerOf(layers, path)
    return layer === undefined ? undefined : { layer, rank: layers.indexOf(layer) }
  }
  const backArrows: Array<string> = []
  const unplaced = new Set<string>()
  for (const file of files) {
    const from = rank(file)
    if (from === undefined) {
      unplaced.add(file)
      continue
    }
    for (const target of importsOfFile(file)) {
      const to = rank(target)
      if (to === undefined) {
        if (/^(src|adapters)\//.test(target)) unplaced.add(target)
        continue
      }
      if (to.rank > from.rank)
        backArrows.push(`${file} → ${target} (${from.layer} imports ${to.layer}, listed below it in the layer map)`)
    }
  }
  return { backArrows, unplaced: [...unplaced].sort() }
}

describe("the layer map (docs/architecture.md)", () => {
  const layers = layerOrder(readFileSync(join(root, "docs", "architecture.md"), "utf8"))
  const files = [...sourceFiles("src"), ...sourceFiles("adapters")]

  it("lists each folder of src/ and adapters/ once, and the two root entry points", () => {
    const folders = (dir: string) =>
      readdirSync(join(root, dir), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => `${dir}/${e.name}/`)
    const rootFiles = readdirSync(join(root, "src"))
      .filter((f) => f.endsWith(".ts"))
      .map((f) => `src/${f}`)
    const expected = [...folders("src"), ...folders("adapters"), ...rootFiles].sort()
    expect(layers.filter((l) => /^(src|adapters)\//.test(l)).sort()).toEqual(expected)
    expect(new Set(layers).size).toBe(layers.length)
  })

  it("holds: no file imports from a layer below its own, and every file is in a layer", () => {
    expect(files.length).toBeGreaterThan(200)
    expect(layerViolations(layers, files, importsOf)).toEqual({ backArrows: [], unplaced: [] })
  })

  it("the check sees a back arrow, whatever form the import takes", () => {
    const order = ["src/wire/", "src/broker/", "src/scheduler/"]
    const forms = [
      'import { entryRecordKey } from "../scheduler/keys.js"',
      'import type { Entry } from "../scheduler/entry.js"',
      'export { entryRecordKey } from "../scheduler/keys.js"',
      'const m = await import("../scheduler/keys.js")'
    ]
    for (const form of forms) {
      const imports = ts
        .preProcessFile(form, true, true)
        .importedFiles.map((f) => `src/${f.fileName.replace(/^\.\.\//, "").replace(/\.js$/, ".ts")}`)
      expect(layerViolations(order, ["src/broker/scheduler.ts"], () => imports).backArrows, form).toHaveLength(1)
    }
    // Downward and sideways (same layer) are allowed; a file in no layer is reported.
    expect(
      layerViolations(order, ["src/scheduler/tick.ts"], () => ["src/broker/Broker.ts", "src/scheduler/entry.ts"])
    ).toEqual({ backArrows: [], unplaced: [] })
    expect(layerViolations(order, ["src/newFolder/x.ts"], () => []).unplaced).toEqual(["src/newFolder/x.ts"])
  })
})
