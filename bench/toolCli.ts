/**
 * The command line of the bench's standalone tools (workerCpuLoop, workflowCpuLoop,
 * redisCostPerTask, idleCost): `--name=value` options, and an entry point (the tool's parent, or a
 * child it spawned with `--child`) whose failure is printed and ends the process with 1.
 */

/** `--name=value` of `args`, or `fallback` when absent. */
export const optionOf =
  (args: ReadonlyArray<string>) =>
  (name: string, fallback: string): string => {
    const hit = args.find((a) => a.startsWith(`--${name}=`))
    return hit === undefined ? fallback : hit.slice(name.length + 3)
  }

/** Every `--name=value` of `args`, in order. */
export const optionsOf =
  (args: ReadonlyArray<string>) =>
  (name: string): Array<string> =>
    args.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3))

/** Runs a tool's entry point; an error is printed and the process exits with 1. */
export const runTool = (entry: () => Promise<unknown>): void => {
  void entry().catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
}

/** The median of some numbers (the mean of the middle two for an even count). */
export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
