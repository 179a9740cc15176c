/** Text formatting for the terminal: aligned tables, sizes, durations, times, payload previews. */

/** Left-aligned columns separated by two spaces; numbers right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string | number>>): string => {
  const cells = rows.map((r) => r.map(String))
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? "").length)))
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === "number"))
  const line = (r: ReadonlyArray<string>) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n")
}

/** `key: value` lines with the keys padded to one width. */
export const fields = (pairs: ReadonlyArray<readonly [string, string | number | boolean]>): string => {
  const w = Math.max(...pairs.map(([k]) => k.length))
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(w + 1)}  ${String(v)}`).join("\n")
}

export const bytes = (n: number): string => {
  if (n < 1024) return `${n} B`
  const units = ["kB", "MB", "GB", "TB"]
  let v = n / 1024
  let u = 0
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024
    u++
  }
  return `${v.toFixed(1)} ${units[u]}`
}

/** 0s, 850ms, 12s, 3m4s, 2h5m, 3d4h. */
export const duration = (ms: number): string => {
  if (ms <= 0) return "0s"
  if (ms < 1000) return `${Math.round(ms)}ms`
  const s = Math.floor(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${s % 60}s`
  const h = Math.floor(m / 60)
  if (h < 24) return `${h}h${m % 60}m`
  return `${Math.floor(h / 24)}d${h % 24}h`
}

export const time = (d: Date | undefined): string => (d === undefined ? "-" : d.toISOString().replace(/\.\d{3}Z$/, "Z"))

/** A payload as text when it is UTF-8, else hex; cut to `max` characters. */
export const preview = (p: Uint8Array | undefined, max = 40): string => {
  if (p === undefined || p.length === 0) return "-"
  let s: string
  try {
    s = new TextDecoder("utf-8", { fatal: true }).decode(p)
  } catch {
    s = `0x${Buffer.from(p).toString("hex")}`
  }
  s = s.replace(/\s+/g, " ")
  return s.length > max ? `${s.slice(0, max - 1)}…` : s
}
