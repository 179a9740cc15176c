/**
 * The manual (README.md and every guide under docs/) is checked against the code:
 * - every ```ts block compiles: each is written to its own module (imports of `effect-asynq/...`
 *   resolved to this checkout's sources, as the package's `exports` map them) and the lot is
 *   type-checked by tsc in strict mode;
 * - every block followed by what it prints (a paragraph saying "prints", then a ```text block) is
 *   run against this file's private Redis database and its output compared (`…` in the expected
 *   text stands for any run of characters within a line);
 * - every relative link names a file that exists and, with a `#fragment`, a heading in it;
 * - no development history (round numbers, issue numbers, times of runs) is left in the manual.
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { flushTestDb, testRedisUrl } from "./support/redis.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const run = promisify(execFile)

/** README.md and every Markdown file under docs/, as paths relative to the checkout. */
const manualFiles = (): Array<string> => {
  const out = ["README.md"]
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name)
    )) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".md")) out.push(path)
    }
  }
  walk("docs")
  return out
}

interface Block {
  readonly file: string
  readonly line: number
  readonly code: string
  /** What the block prints, when the text after it says so. */
  readonly prints: string | undefined
}

/** The fenced block starting at `lines[open]` (its info string already checked): its body and the index of its closing fence. */
const fenced = (lines: ReadonlyArray<string>, open: number): { body: string; close: number } => {
  let close = open + 1
  while (close < lines.length && lines[close]!.trim() !== "```") close++
  return { body: lines.slice(open + 1, close).join("\n"), close }
}

/** The ```text block after a ts block, when the paragraph between them says the block prints it. */
const printedAfter = (lines: ReadonlyArray<string>, close: number): string | undefined => {
  let i = close + 1
  while (i < lines.length && lines[i]!.trim() === "") i++
  const paragraph: Array<string> = []
  while (i < lines.length && lines[i]!.trim() !== "" && !lines[i]!.startsWith("```")) paragraph.push(lines[i++]!)
  if (!/\bprints\b/i.test(paragraph.join(" "))) return undefined
  while (i < lines.length && lines[i]!.trim() === "") i++
  if (lines[i]?.trim() !== "```text") return undefined
  return fenced(lines, i).body
}

/** The ```ts blocks of one Markdown file, with the line each starts on and what it prints. */
const tsBlocks = (file: string): Array<Block> => {
  const lines = readFileSync(join(root, file), "utf8").split("\n")
  const out: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const info = lines[i]!.trim()
    if (!info.startsWith("```")) continue
    const { body, close } = fenced(lines, i)
    if (info === "```ts") out.push({ file, line: i + 2, code: body, prints: printedAfter(lines, close) })
    i = close
  }
  return out
}

/** The package's entry points (`exports` in package.json), each to its source: effect-asynq/client → src/client.ts. */
const entryPoints: Record<string, string> = Object.fromEntries(
  Object.entries(
    (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        exports: Record<string, string | { default: string }>
      }
    ).exports
  )
    .filter((entry): entry is [string, { default: string }] => typeof entry[1] !== "string")
    .map(([subpath, target]) => [
      `effect-asynq${subpath.slice(1)}`,
      target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts")
    ])
)

/** A block file's name: which Markdown file and line it came from (tsc's errors name it). */
const blockName = (b: Block, i: number) =>
  `block${String(i + 1).padStart(3, "0")}_${b.file.replace(/[/.]/g, "_")}_line${b.line}.ts`

/** The block as a runnable module: `effect-asynq/...` imports pointed at this checkout's sources (a subpath the package does not export stays unresolved, and fails). */
const runnable = (code: string): string =>
  code.replace(/from "(effect-asynq(?:\/[\w/-]+)?)"/g, (whole, spec: string) => {
    const source = entryPoints[spec]
    return source === undefined ? whole : `from ${JSON.stringify(join(root, source))}`
  })

/** Matches `actual` against `expected`, where `…` in `expected` is any run of characters within a line. */
const matchesPrinted = (actual: string, expected: string): boolean => {
  const pattern = expected
    .trim()
    .split("…")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("[^\\n]*")
  return new RegExp(`^${pattern}$`).test(actual.trim())
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-")

/** The anchors of a Markdown file's headings (a repeated heading gets `-1`, `-2`, … as on GitHub). */
const anchors = (file: string): Set<string> => {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  let inFence = false
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("```")) inFence = !inFence
    const m = !inFence ? /^#{1,6} (.*)$/.exec(line) : null
    if (m === null) continue
    const base = slug(m[1]!)
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

const files = manualFiles()
const blocks = files.flatMap(tsBlocks)
const dir = join(root, ".tmp", `manual-check-${process.pid}`)

beforeAll(() => {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("the manual (README.md and docs/)", () => {
  it("has the guides, and the README stays short", () => {
    for (const guide of [
      "enqueueing",
      "worker",
      "steps",
      "cron",
      "serverless",
      "edge",
      "operations",
      "dashboard",
      "observability",
      "fault-tolerance",
      "asynq-compatibility",
      "architecture"
    ])
      expect(files, `docs/${guide}.md`).toContain(join("docs", `${guide}.md`))
    expect(readFileSync(join(root, "README.md"), "utf8").split("\n").length).toBeLessThanOrEqual(300)
  })

  it("every TypeScript block type-checks against the sources", () => {
    expect(blocks.length).toBeGreaterThan(30)
    // Inside the checkout, so the blocks' other imports (effect, ioredis, …) resolve from its node_modules.
    const check = join(dir, "typecheck")
    mkdirSync(check, { recursive: true })
    const names = blocks.map((b, i) => {
      const name = blockName(b, i)
      // `export {}` makes every block a module (own scope, top-level await allowed).
      writeFileSync(join(check, name), `${b.code}\nexport {}\n`)
      return name
    })
    const paths = Object.fromEntries(
      Object.entries(entryPoints).map(([spec, file]) => [spec, [relative(check, join(root, file))]])
    )
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "bundler",
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: ["node"],
        baseUrl: ".",
        paths
      },
      files: names
    }
    writeFileSync(join(check, "tsconfig.json"), JSON.stringify(tsconfig, null, 2))
    let output = ""
    try {
      execFileSync(
        process.execPath,
        [join(root, "node_modules/typescript/bin/tsc"), "-p", join(check, "tsconfig.json")],
        { encoding: "utf8", stdio: "pipe" }
      )
    } catch (e) {
      output = `${(e as { stdout?: string }).stdout ?? ""}${(e as { stderr?: string }).stderr ?? ""}` || String(e)
    }
    // Each error names its block file, and so the Markdown file and the line the block starts on.
    expect(output).toBe("")
  }, 600_000) // one tsc over every block and the sources they import: ~70 s on a quiet 2-core machine, minutes under load

  const printing = blocks.filter((b) => b.prints !== undefined)

  it("some blocks show what they print", () => {
    expect(printing.length).toBeGreaterThanOrEqual(3)
  })

  for (const b of printing) {
    it(`${b.file}:${b.line} prints what the text after it shows`, async () => {
      await flushTestDb()
      const file = join(dir, `run_${b.file.replace(/[/.]/g, "_")}_line${b.line}.ts`)
      writeFileSync(file, `${runnable(b.code)}\nexport {}\n`)
      const { stdout } = await run(process.execPath, ["--import", "tsx", file], {
        cwd: root,
        env: { ...process.env, REDIS_URL: testRedisUrl() },
        timeout: 60_000
      })
      expect(matchesPrinted(stdout, b.prints!), `printed:\n${stdout}\nthe manual shows:\n${b.prints}`).toBe(true)
    }, 90_000)
  }

  it("every relative link names an existing file, and a heading in it", () => {
    const broken: Array<string> = []
    for (const file of files) {
      const text = readFileSync(join(root, file), "utf8").replace(/```[\s\S]*?```/g, "")
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!
        if (/^[a-z]+:/i.test(target)) continue
        const [path, fragment] = target.split("#") as [string, string | undefined]
        const resolved = path === "" ? join(root, file) : resolve(dirname(join(root, file)), path)
        if (!existsSync(resolved)) broken.push(`${file}: ${target} (no such file)`)
        else if (fragment !== undefined && resolved.endsWith(".md") && !anchors(resolved).has(fragment))
          broken.push(`${file}: ${target} (no such heading)`)
      }
    }
    expect(broken).toEqual([])
  })

  it("holds no development history: no round or issue numbers, no times of runs", () => {
    const found: Array<string> = []
    const history = [
      /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(st|nd|rd|th)) round\b/i,
      /\bissues? #?\d+/i,
      /\b\d{1,2}:\d{2}(:\d{2})? UTC\b(?! \d{4})/, // a time of day, not a Go date such as `00:00:00 UTC 2030`
      /\b20\d\d-\d\d-\d\d,? (at )?\d{1,2}:\d{2}\b/
    ]
    for (const file of files)
      readFileSync(join(root, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (history.some((re) => re.test(line))) found.push(`${file}:${i + 1}: ${line.trim()}`)
        })
    expect(found).toEqual([])
  })
})
