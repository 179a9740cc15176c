/**
 * Go's time.Duration text: `String()` (e.g. "1h0m0s", "1m30s", "1.5s", "250µs", "0s") and
 * `time.ParseDuration`. Exact: all arithmetic is on integer nanoseconds (bigint).
 */

const NS = 1n
const US = 1_000n
const MS = 1_000_000n
const S = 1_000_000_000n
const M = 60n * S
const H = 60n * M
const INT64_MAX = (1n << 63n) - 1n

/** `v / 10^prec` as a decimal with trailing zeros (and a bare ".") dropped. */
const frac = (v: bigint, prec: number): string => {
  const scale = 10n ** BigInt(prec)
  const int = v / scale
  const f = (v % scale).toString().padStart(prec, "0").replace(/0+$/, "")
  return f === "" ? int.toString() : `${int}.${f}`
}

/** Go's `time.Duration(ns).String()`. */
export const goDurationNs = (ns: bigint): string => {
  const neg = ns < 0n
  const u = neg ? -ns : ns
  let out: string
  if (u === 0n) return "0s"
  if (u < US) out = `${u}ns`
  else if (u < MS) out = `${frac(u, 3)}µs`
  else if (u < S) out = `${frac(u, 6)}ms`
  else {
    const h = u / H
    const m = (u % H) / M
    const s = frac(u % M, 9)
    out = h > 0n ? `${h}h${m}m${s}s` : m > 0n ? `${m}m${s}s` : `${s}s`
  }
  return neg ? `-${out}` : out
}

/** Milliseconds (fractions allowed, rounded to the nanosecond) as a Go duration string. */
export const msToNs = (ms: number): bigint => BigInt(Math.round(ms * 1e6))
export const goDuration = (ms: number): string => goDurationNs(msToNs(ms))

const units: Record<string, bigint> = { ns: NS, us: US, µs: US, μs: US, ms: MS, s: S, m: M, h: H }

/** Go's `time.ParseDuration`: "1h2m3.5s", "250µs", "-1.5h", "0". Throws on bad input. */
export const parseGoDurationNs = (text: string): bigint => {
  let s = text
  let neg = false
  if (s.startsWith("-") || s.startsWith("+")) {
    neg = s[0] === "-"
    s = s.slice(1)
  }
  if (s === "0") return 0n
  if (s === "") throw new Error(`invalid duration ${JSON.stringify(text)}`)
  let total = 0n
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/
  while (s !== "") {
    const p = part.exec(s)
    if (!p || (p[1] === "" && (p[2] ?? "") === "")) throw new Error(`invalid duration ${JSON.stringify(text)}`)
    const unit = units[p[3]!]!
    const digits = p[2] ?? ""
    total += BigInt(p[1] || "0") * unit + (BigInt(digits || "0") * unit) / 10n ** BigInt(digits.length)
    if (total > INT64_MAX + (neg ? 1n : 0n)) throw new Error(`invalid duration ${JSON.stringify(text)}: out of range`)
    s = s.slice(p[0].length)
  }
  return neg ? -total : total
}

/** `parseGoDurationNs` in milliseconds (sub-millisecond parts kept as a fraction). */
export const parseGoDuration = (text: string): number => Number(parseGoDurationNs(text)) / 1e6
