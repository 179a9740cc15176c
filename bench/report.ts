/**
 * Turns the collected results into table rows (each figure, the ratio effect-asynq ÷ peer, and the
 * target of issue 12, "Engine speed", where there is one) and prints them. Targets are reported, never asserted.
 */
import type { LibName } from "./libs/types.js"
import { pairedRatios, roundsOf } from "./pairedRounds.js"
import type { BulkResult, FlowResult, LatencyResult, LatenessResult, RateResult } from "./scenarios.js"

/** results[scenarioKey][lib] = result object, or an error string when the scenario failed/was pending. */
export type Results = Record<string, Partial<Record<LibName, unknown>>>

type Better = "higher" | "lower" | "info"

interface Target {
  readonly peer: LibName
  /** effect-asynq ÷ peer must be ≥ factor (higher is better) or ≤ factor (lower is better) */
  readonly factor: number
}

interface RowSpec {
  readonly label: string
  readonly unit: string
  readonly better: Better
  readonly scenario: string
  /** A row of an opt-in scenario: shown only when that scenario ran. */
  readonly optIn?: boolean
  readonly pick: (r: never) => number
  readonly targets?: ReadonlyArray<Target>
  readonly digits?: number
}

const rate = (r: RateResult) => r.perSecond

/**
 * The rows of the payload-size scenarios (bench/main.ts: enqueueSerial1k, enqueueBulk10k,
 * process100_100k, …), with issue 34's targets: at 10 KB enqueue (one by one and bulk) and
 * processing ≥ bee-queue, at 100 KB processing ≥ bee-queue with Redis CPU per task ≤ 1.1× bee-queue's.
 */
function payloadRows(): ReadonlyArray<RowSpec> {
  const atLeastBee: ReadonlyArray<Target> = [{ peer: "bee-queue", factor: 1 }]
  return (["1k", "10k", "100k"] as const).flatMap((size): ReadonlyArray<RowSpec> => {
    const label = `${size.toUpperCase()}B payload`
    const at10k = size === "10k"
    const processTarget = size === "1k" ? undefined : atLeastBee
    return [
      {
        label: `${label}: enqueue one-by-one`,
        unit: "tasks/s",
        better: "higher",
        scenario: `enqueueSerial${size}`,
        pick: rate,
        ...(at10k ? { targets: atLeastBee } : {})
      },
      {
        label: `${label}: enqueue bulk`,
        unit: "tasks/s",
        better: "higher",
        scenario: `enqueueBulk${size}`,
        pick: rate,
        ...(at10k ? { targets: atLeastBee } : {})
      },
      {
        label: `${label}: enqueue bulk, Redis CPU per task`,
        unit: "µs",
        better: "lower",
        scenario: `enqueueBulk${size}`,
        pick: (r: RateResult) => r.redisCpuUs,
        digits: 1
      },
      {
        label: `${label}: processing, c=100`,
        unit: "tasks/s",
        better: "higher",
        scenario: `process100_${size}`,
        pick: rate,
        ...(processTarget ? { targets: processTarget } : {})
      },
      {
        label: `${label}: processing, Node CPU per task`,
        unit: "µs",
        better: "lower",
        scenario: `process100_${size}`,
        pick: (r: RateResult) => r.nodeCpuUs,
        digits: 1
      },
      {
        label: `${label}: processing, Redis CPU per task`,
        unit: "µs",
        better: "lower",
        scenario: `process100_${size}`,
        pick: (r: RateResult) => r.redisCpuUs,
        ...(size === "100k" ? { targets: [{ peer: "bee-queue", factor: 1.1 }] } : {}),
        digits: 1
      }
    ]
  })
}
/**
 * The rows of "workflow3" (issue 33): 3-step workflows per second at concurrency 50 against BullMQ's
 * flows (a parent and 3 children), target ≥ 1.5× BullMQ's rate; Redis commands per flow, target
 * fewer than BullMQ's; per step, and the CPU per flow.
 */
function flowRows(): ReadonlyArray<RowSpec> {
  const scenario = "workflow3"
  return [
    {
      label: "3-step workflows, concurrency 50",
      unit: "flows/s",
      better: "higher",
      scenario,
      pick: rate,
      targets: [{ peer: "bullmq", factor: 1.5 }]
    },
    {
      label: "3-step workflows: Redis cmds per flow",
      unit: "calls",
      better: "lower",
      scenario,
      pick: (r: FlowResult) => r.redisCalls,
      targets: [{ peer: "bullmq", factor: 1 }],
      digits: 1
    },
    {
      label: "3-step workflows: Redis cmds per step",
      unit: "calls",
      better: "lower",
      scenario,
      pick: (r: FlowResult) => r.redisCallsPerStep,
      digits: 1
    },
    {
      label: "3-step workflows: Node CPU per flow",
      unit: "µs",
      better: "lower",
      scenario,
      pick: (r: FlowResult) => r.nodeCpuUs
    },
    {
      label: "3-step workflows: Redis CPU per flow",
      unit: "µs",
      better: "lower",
      scenario,
      pick: (r: FlowResult) => r.redisCpuUs
    }
  ]
}

const rows: ReadonlyArray<RowSpec> = [
  {
    label: "enqueue one-by-one (awaited in turn)",
    unit: "tasks/s",
    better: "higher",
    scenario: "enqueueSerial",
    pick: rate,
    targets: [{ peer: "bee-queue", factor: 1 }]
  },
  {
    label: "enqueue one-by-one (50 callers)",
    unit: "tasks/s",
    better: "higher",
    scenario: "enqueueConcurrent",
    pick: rate
  },
  {
    label: "enqueue bulk (batches of 1,000)",
    unit: "tasks/s",
    better: "higher",
    scenario: "enqueueBulk",
    pick: rate,
    targets: [{ peer: "bee-queue", factor: 1 }]
  },
  {
    label: "enqueue bulk: Node CPU per task",
    unit: "µs",
    better: "lower",
    scenario: "enqueueBulk",
    pick: (r: RateResult) => r.nodeCpuUs,
    digits: 1
  },
  {
    label: "enqueue bulk: Redis CPU per task",
    unit: "µs",
    better: "lower",
    scenario: "enqueueBulk",
    pick: (r: RateResult) => r.redisCpuUs,
    digits: 1
  },
  {
    label: "enqueue one-by-one: Node CPU per task",
    unit: "µs",
    better: "lower",
    scenario: "enqueueSerial",
    pick: (r: RateResult) => r.nodeCpuUs,
    targets: [{ peer: "bee-queue", factor: 1 }],
    digits: 1
  },
  {
    label: "enqueue one-by-one: Redis CPU per task",
    unit: "µs",
    better: "lower",
    scenario: "enqueueSerial",
    pick: (r: RateResult) => r.redisCpuUs,
    digits: 1
  },
  {
    label: "enqueue one-by-one: Redis cmds per task",
    unit: "calls",
    better: "lower",
    scenario: "enqueueSerial",
    pick: (r: RateResult) => r.redisCalls,
    digits: 2
  },
  {
    label: "Redis bytes per pending task",
    unit: "bytes",
    better: "lower",
    scenario: "enqueueBulk",
    pick: (r: BulkResult) => r.bytesPerTask,
    targets: [{ peer: "bullmq", factor: 1 }]
  },
  {
    label: "Redis keys per pending task",
    unit: "keys",
    better: "info",
    scenario: "enqueueBulk",
    pick: (r: BulkResult) => r.keysPerTask,
    digits: 3
  },
  {
    label: "no-op processing, concurrency 1",
    unit: "tasks/s",
    better: "higher",
    scenario: "process1",
    pick: rate,
    targets: [{ peer: "bullmq", factor: 1 }]
  },
  {
    label: "no-op processing, concurrency 10",
    unit: "tasks/s",
    better: "higher",
    scenario: "process10",
    pick: rate,
    targets: [{ peer: "bee-queue", factor: 1 }]
  },
  {
    label: "no-op processing, concurrency 100",
    unit: "tasks/s",
    better: "higher",
    scenario: "process100",
    pick: rate,
    targets: [{ peer: "bee-queue", factor: 1.2 }]
  },
  {
    label: "c=100: Node CPU per processed task",
    unit: "µs",
    better: "lower",
    scenario: "process100",
    pick: (r: RateResult) => r.nodeCpuUs,
    digits: 1
  },
  {
    label: "c=100: Redis CPU per processed task",
    unit: "µs",
    better: "lower",
    scenario: "process100",
    pick: (r: RateResult) => r.redisCpuUs,
    digits: 1
  },
  {
    label: "c=100: Node+Redis CPU per processed task",
    unit: "µs",
    better: "lower",
    scenario: "process100",
    pick: (r: RateResult) => r.nodeCpuUs + r.redisCpuUs,
    targets: [{ peer: "bee-queue", factor: 1 }],
    digits: 1
  },
  {
    label: "c=100: Redis commands per processed task",
    unit: "calls",
    better: "lower",
    scenario: "process100",
    pick: (r: RateResult) => r.redisCalls,
    targets: [{ peer: "bee-queue", factor: 1 }],
    digits: 2
  },
  {
    label: "c=1: Node+Redis CPU per processed task",
    unit: "µs",
    better: "lower",
    scenario: "process1",
    pick: (r: RateResult) => r.nodeCpuUs + r.redisCpuUs,
    targets: [{ peer: "bullmq", factor: 1 }],
    digits: 1
  },
  {
    label: "c=10, one long-running worker (opt-in)",
    unit: "tasks/s",
    better: "higher",
    scenario: "process10steady",
    pick: rate,
    optIn: true
  },
  {
    label: "c=10, one long-running worker: Node CPU",
    unit: "µs",
    better: "lower",
    scenario: "process10steady",
    pick: (r: RateResult) => r.nodeCpuUs,
    digits: 1,
    optIn: true
  },
  {
    label: "c=100, one long-running worker (opt-in)",
    unit: "tasks/s",
    better: "higher",
    scenario: "process100steady",
    pick: rate,
    optIn: true
  },
  {
    label: "c=100, one long-running worker: Node CPU",
    unit: "µs",
    better: "lower",
    scenario: "process100steady",
    pick: (r: RateResult) => r.nodeCpuUs,
    digits: 1,
    optIn: true
  },
  {
    label: "latency p50 (500/s, concurrency 10)",
    unit: "ms",
    better: "lower",
    scenario: "latency",
    pick: (r: LatencyResult) => r.p50Ms,
    targets: [{ peer: "bee-queue", factor: 1 }],
    digits: 2
  },
  {
    label: "latency p95",
    unit: "ms",
    better: "lower",
    scenario: "latency",
    pick: (r: LatencyResult) => r.p95Ms,
    digits: 2
  },
  {
    label: "latency p99",
    unit: "ms",
    better: "lower",
    scenario: "latency",
    pick: (r: LatencyResult) => r.p99Ms,
    targets: [{ peer: "bee-queue", factor: 1.5 }],
    digits: 2
  },
  {
    label: "scheduled 0.1–5 s ahead: lateness p50",
    unit: "ms",
    better: "lower",
    scenario: "scheduledLateness",
    pick: (r: LatenessResult) => r.delayedP50Ms,
    digits: 1
  },
  {
    label: "scheduled 0.1–5 s ahead: lateness p99",
    unit: "ms",
    better: "lower",
    scenario: "scheduledLateness",
    pick: (r: LatenessResult) => r.delayedP99Ms,
    digits: 1
  },
  {
    label: "retry after 200 ms: lateness p50",
    unit: "ms",
    better: "lower",
    scenario: "scheduledLateness",
    pick: (r: LatenessResult) => r.retryP50Ms,
    digits: 1
  },
  {
    label: "retry after 200 ms: lateness p99",
    unit: "ms",
    better: "lower",
    scenario: "scheduledLateness",
    pick: (r: LatenessResult) => r.retryP99Ms,
    digits: 1
  },
  {
    label: "burst due at once: all ready after",
    unit: "ms",
    better: "lower",
    scenario: "scheduledLateness",
    pick: (r: LatenessResult) => r.burstAllReadyMs
  },
  ...flowRows(),
  ...payloadRows()
]

export interface TableRow {
  readonly metric: string
  readonly unit: string
  readonly better: Better
  readonly values: Partial<Record<LibName, number | string>>
  readonly ratios: Partial<Record<LibName, number>>
  readonly targets: ReadonlyArray<{
    readonly text: string
    readonly met: boolean | undefined
    /** With several rounds: in how many of the round-by-round ratios (round i against round i) the target held. */
    readonly rounds?: { readonly met: number; readonly of: number } | undefined
  }>
  readonly digits: number
}

const shortName: Record<LibName, string> = {
  "effect-asynq": "effect-asynq",
  bullmq: "BullMQ",
  "bee-queue": "bee-queue",
  floor: "floor"
}

export const buildRows = (results: Results, libs: ReadonlyArray<LibName>): TableRow[] =>
  rows
    .filter((spec) => !spec.optIn || results[spec.scenario] !== undefined)
    .map((spec) => {
      const values: Partial<Record<LibName, number | string>> = {}
      for (const lib of libs) {
        const r = results[spec.scenario]?.[lib]
        if (r === undefined) continue
        values[lib] = typeof r === "string" ? r : (spec.pick as (x: unknown) => number)(r)
      }
      const own = values["effect-asynq"]
      const ratios: Partial<Record<LibName, number>> = {}
      for (const peer of libs) {
        const v = values[peer]
        if (peer === "effect-asynq" || typeof own !== "number" || typeof v !== "number" || v === 0) continue
        ratios[peer] = own / v
      }
      const meets = (ratio: number, factor: number) => (spec.better === "higher" ? ratio >= factor : ratio <= factor)
      const targets = (spec.targets ?? [])
        .filter((t) => libs.includes(t.peer) && libs.includes("effect-asynq"))
        .map((t) => {
          const ratio = ratios[t.peer]
          const sign = spec.better === "higher" ? "≥" : "≤"
          const met = ratio === undefined ? undefined : meets(ratio, t.factor)
          // Round i of effect-asynq against round i of the peer: the libraries of a round run one
          // after the other, so a pair shares the machine's slow swings.
          const pairs = pairedRatios(
            roundsOf(results[spec.scenario]?.["effect-asynq"]),
            roundsOf(results[spec.scenario]?.[t.peer]),
            spec.pick as (round: Record<string, unknown>) => number
          )
          const rounds =
            pairs.length > 1 ? { met: pairs.filter((r) => meets(r, t.factor)).length, of: pairs.length } : undefined
          return { text: `${sign}${t.factor}× ${shortName[t.peer]}`, met, rounds }
        })
      return {
        metric: spec.label,
        unit: spec.unit,
        better: spec.better,
        values,
        ratios,
        targets,
        digits: spec.digits ?? 0
      }
    })

/** A target's verdict (on the medians' ratio), with how many rounds met it when there were several. */
const verdict = (t: TableRow["targets"][number], missed: string): string =>
  `${t.text} ${t.met === undefined ? "?" : t.met ? "met" : missed}${t.rounds ? ` (${t.rounds.met} of ${t.rounds.of} rounds)` : ""}`

const fmt = (v: number | string | undefined, digits = 0): string => {
  if (v === undefined) return "—"
  if (typeof v === "string") return v
  return v.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

export const renderTable = (tableRows: ReadonlyArray<TableRow>, libs: ReadonlyArray<LibName>): string => {
  const peers = libs.filter((l) => l !== "effect-asynq")
  const header = [
    "metric",
    "unit",
    ...libs.map((l) => shortName[l]),
    ...(libs.includes("effect-asynq") ? peers.map((p) => `÷ ${shortName[p]}`) : []),
    "target"
  ]
  const body = tableRows.map((r) => {
    const digits = r.digits
    const arrow = r.better === "higher" ? " ↑" : r.better === "lower" ? " ↓" : ""
    const cells = libs.map((l) => {
      const v = r.values[l]
      return typeof v === "string" ? "pending" : fmt(v, digits)
    })
    const ratioCells = libs.includes("effect-asynq")
      ? peers.map((p) => (r.ratios[p] === undefined ? "—" : `${r.ratios[p]!.toFixed(2)}×`))
      : []
    const target = r.targets.map((t) => verdict(t, "MISSED")).join(", ")
    return [r.metric + arrow, r.unit, ...cells, ...ratioCells, target]
  })
  const all = [header, ...body]
  const widths = header.map((_, i) => Math.max(...all.map((row) => [...row[i]!].length)))
  const line = (row: ReadonlyArray<string>) =>
    row
      .map((c, i) => (i < 2 || i === row.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}

/** The same table as Markdown (for the README). */
export const renderMarkdown = (tableRows: ReadonlyArray<TableRow>, libs: ReadonlyArray<LibName>): string => {
  const peers = libs.filter((l) => l !== "effect-asynq")
  const withRatios = libs.includes("effect-asynq")
  const header = [
    "metric",
    "unit",
    ...libs.map((l) => shortName[l]),
    ...(withRatios ? peers.map((p) => `÷ ${shortName[p]}`) : []),
    "target"
  ]
  const out = [
    `| ${header.join(" | ")} |`,
    `|${header.map((_, i) => (i < 2 || i === header.length - 1 ? "---" : "---:")).join("|")}|`
  ]
  for (const r of tableRows) {
    const digits = r.digits
    const arrow = r.better === "higher" ? " ↑" : r.better === "lower" ? " ↓" : ""
    const cells = libs.map((l) => (typeof r.values[l] === "string" ? "pending" : fmt(r.values[l], digits)))
    const ratioCells = withRatios
      ? peers.map((p) => (r.ratios[p] === undefined ? "—" : `${r.ratios[p]!.toFixed(2)}×`))
      : []
    const target = r.targets.map((t) => verdict(t, "**missed**")).join(", ")
    out.push(`| ${[r.metric + arrow, r.unit, ...cells, ...ratioCells, target].join(" | ")} |`)
  }
  return out.join("\n")
}
