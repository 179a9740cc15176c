import { describe, expect, it } from "vitest"
import { parseQueueWeights } from "../../adapters/worker/args.js"
import { runCli } from "../cli/runCli.js"

describe("effect-asynq worker arguments", () => {
  it("parses queue weights; a missing weight is 1", () => {
    expect(parseQueueWeights("critical=6,default=3,low")).toEqual({
      ok: true,
      queues: { critical: 6, default: 3, low: 1 }
    })
  })

  it("says what is wrong with a bad pair", () => {
    for (const bad of ["a=0", "a=x", "=3", "a=1=2", "a=1.5"]) {
      const r = parseQueueWeights(bad)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.error).toContain(`got "${bad}"`)
    }
  })

  it("the command line rejects bad flags with exit code 2 and a clear message, before connecting", async () => {
    const bad = await runCli(["worker", "m.js", "--queues", "a=0", "--redis-url", "redis://127.0.0.1:1"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(
      '--queues expects name=weight pairs with whole weights >= 1, like critical=6,default=3; got "a=0"'
    )
    const nan = await runCli(["worker", "m.js", "--concurrency", "x"])
    expect(nan.code).toBe(2)
    const missing = await runCli(["worker"])
    expect(missing.code).toBe(2)
  })
})
