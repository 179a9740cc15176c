/** Logging for the worker adapters, through Effect's Logger: a format and a minimum level. */
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as References from "effect/References"
import type { LogLevel } from "effect/LogLevel"

export type LogFormat = "pretty" | "logfmt" | "json"

export const loggingLayer = (format: LogFormat = "logfmt", level: LogLevel = "Info") =>
  Layer.mergeAll(
    Logger.layer([
      format === "json" ? Logger.consoleJson : format === "pretty" ? Logger.consolePretty() : Logger.consoleLogFmt
    ]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
