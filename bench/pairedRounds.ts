/**
 * Reading an A/B of interleaved rounds (`npm run bench -- --baseline=DIR --rounds=N`): round i of
 * this tree and round i of the base ran one after the other, so their ratio is a pair the machine's
 * slow swings hit alike. On a shared machine single rounds move by tens of per cent, so a median
 * alone can mislead; the pairs say how often one side was ahead, and a sign test says how likely
 * that count is when the two sides are the same code (an A/A run: every pair is a coin toss).
 */
import { median } from "./toolCli.js"

/** The rounds a result of several rounds carries (its `rounds`); empty for a single round's result. */
export const roundsOf = (r: unknown): ReadonlyArray<Record<string, unknown>> =>
  typeof r === "object" && r !== null && Array.isArray((r as { rounds?: unknown }).rounds)
    ? (r as { rounds: ReadonlyArray<Record<string, unknown>> }).rounds
    : []

/**
 * Round-by-round ratios a[i] / b[i] of one figure: a field of each round, or what `figure` reads
 * from it (rounds where either side lacks it are left out).
 */
export const pairedRatios = (
  a: ReadonlyArray<Record<string, unknown>>,
  b: ReadonlyArray<Record<string, unknown>>,
  figure: string | ((round: Record<string, unknown>) => unknown)
): Array<number> => {
  const read = typeof figure === "string" ? (r: Record<string, unknown>) => r[figure] : figure
  const out: Array<number> = []
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = read(a[i]!)
    const y = read(b[i]!)
    if (typeof x === "number" && typeof y === "number" && y !== 0) out.push(x / y)
  }
  return out
}

/**
 * The two-sided sign test: how likely `k` or a count further from n/2 is, out of `n` pairs that
 * are each equally likely to go either way (ties left out before counting).
 */
export const signTestP = (k: number, n: number): number => {
  if (n === 0) return 1
  const tail = Math.min(k, n - k)
  let p = 0
  let c = 1 // C(n, 0)
  for (let i = 0; i <= tail; i++) {
    p += c
    c = (c * (n - i)) / (i + 1)
  }
  return Math.min(1, (2 * p) / 2 ** n)
}

/** What the pairs of one figure say: the median ratio, its range, and the rounds this tree was ahead in. */
export interface PairedSummary {
  readonly median: number
  readonly min: number
  readonly max: number
  /** Rounds in which this tree did better (higher when `higherIsBetter`, else lower). */
  readonly ahead: number
  /** Rounds that were not a tie (`tieBand`). */
  readonly decided: number
  /** The sign test's p for `ahead` of `decided` (small: the sides differ beyond the rounds' noise). */
  readonly p: number
}

/**
 * A pair within this of 1 (half a per cent) is a tie: figures that hardly move (Redis commands per
 * task, 6.003 against 6.002) would otherwise read as "behind in every round" over a difference
 * nobody could notice.
 */
export const tieBand = 0.005

/** Summarizes paired ratios (see the module comment); undefined without any pair. */
export const summarizePairs = (ratios: ReadonlyArray<number>, higherIsBetter: boolean): PairedSummary | undefined => {
  if (ratios.length === 0) return undefined
  const decided = ratios.filter((r) => Math.abs(r - 1) >= tieBand)
  const ahead = decided.filter((r) => (higherIsBetter ? r > 1 : r < 1)).length
  return {
    median: median(ratios),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    ahead,
    decided: decided.length,
    p: signTestP(ahead, decided.length)
  }
}
