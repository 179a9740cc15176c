/**
 * Enqueue options as asynq's scheduler publishes them in `SchedulerEntry.enqueue_options`: Go's
 * `Option.String()` forms (see src/wire/optionString.ts), in the order the options object lists
 * them; a `headers` object gives one `Header([k,v])` per header, sorted by name. Dates are
 * written in UTC (a JS Date carries no zone).
 */
import type { EnqueueOptions } from "../steps/options.js"
import { optionString } from "../wire/optionString.js"

const one = (key: string, v: unknown): ReadonlyArray<string> => {
  switch (key) {
    case "queue":
      return [optionString.queue(v as string)]
    case "maxRetry":
      return [optionString.maxRetry(v as number)]
    case "timeout":
      return [optionString.timeout(v as number)]
    case "deadline":
      return [optionString.deadline(v as Date | number)]
    case "unique":
      return [optionString.unique(v as number)]
    case "processAt":
      return [optionString.processAt(v as Date | number)]
    case "processIn":
      return [optionString.processIn(v as number)]
    case "taskId":
      return [optionString.taskId(v as string)]
    case "retention":
      return [optionString.retention(v as number)]
    case "group":
      return [optionString.group(v as string)]
    case "headers": {
      const h = v as Readonly<Record<string, string>>
      return Object.keys(h)
        .sort()
        .map((k) => optionString.header(k, h[k]!))
    }
    default:
      return []
  }
}

/** The `Option.String()` list of validated enqueue options (undefined values are skipped). */
export const enqueueOptionStrings = (options: EnqueueOptions | undefined): ReadonlyArray<string> =>
  options === undefined ? [] : Object.entries(options).flatMap(([k, v]) => (v === undefined ? [] : one(k, v)))
