import { describe, expect, it } from "vitest"
import { parseWorkerArgs } from "../../adapters/worker/args.js"

describe("effect-asynq worker arguments", () => {
  it("parses the module and options", () => {
    expect(parseWorkerArgs(["./handlers.js", "--concurrency", "20", "--queues", "critical=6,default=3,low", "--strict", "--shutdown-timeout", "15000", "--log-format", "json", "--log-level", "Debug", "--redis", "redis://r:6379/2"])).toEqual({
      ok: true,
      args: { handlersModule: "./handlers.js", concurrency: 20, queues: { critical: 6, default: 3, low: 1 }, strictPriority: true, shutdownTimeoutMs: 15000, logFormat: "json", logLevel: "Debug", redisUrl: "redis://r:6379/2" }
    })
  })

  it("says what is wrong", () => {
    expect(parseWorkerArgs([])).toEqual({ ok: false, error: "the handlers module is missing" })
    expect(parseWorkerArgs(["m.js", "--concurrency", "x"])).toEqual({ ok: false, error: '--concurrency must be a whole number, got "x"' })
    expect(parseWorkerArgs(["m.js", "--queues", "a=0"])).toEqual({ ok: false, error: '--queues expects name=weight pairs like critical=6,default=3, got "a=0"' })
    expect(parseWorkerArgs(["m.js", "--nope"])).toEqual({ ok: false, error: "unknown option --nope" })
    expect(parseWorkerArgs(["m.js", "--redis"])).toEqual({ ok: false, error: "--redis needs a value" })
  })
})
