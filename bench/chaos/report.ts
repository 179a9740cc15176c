/** The chaos suite's result rows and the table it prints (plain text, and Markdown for the README). */

export interface ChaosRow {
  /** The fault, as the issue names it. */
  readonly fault: string
  /** What was measured, with the numbers. */
  readonly figure: string
  /** What must hold. */
  readonly expectation: string
  readonly pass: boolean
}

const widths = (rows: ReadonlyArray<ReadonlyArray<string>>) =>
  rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))

const cells = (rows: ReadonlyArray<ChaosRow>): Array<Array<string>> => [
  ["fault", "figure", "expectation", "result"],
  ...rows.map((r) => [r.fault, r.figure, r.expectation, r.pass ? "pass" : "FAIL"])
]

/** An aligned text table. */
export const renderText = (rows: ReadonlyArray<ChaosRow>): string => {
  const all = cells(rows)
  const w = widths(all)
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => c.padEnd(w[i]!))
      .join("  ")
      .trimEnd()
  return [line(all[0]!), w.map((n) => "-".repeat(n)).join("  "), ...all.slice(1).map(line)].join("\n")
}

/** A Markdown table (what the README shows). */
export const renderMarkdown = (rows: ReadonlyArray<ChaosRow>): string => {
  const all = cells(rows)
  const line = (r: ReadonlyArray<string>) => `| ${r.map((c) => c.replaceAll("|", "\\|")).join(" | ")} |`
  return [line(all[0]!), `|${all[0]!.map(() => "---").join("|")}|`, ...all.slice(1).map(line)].join("\n")
}
