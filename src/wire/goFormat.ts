/**
 * Go text formats asynq writes into Redis, in one import: durations, time.UnixDate, %q quoting,
 * and the `Option.String()` forms of SchedulerEntry.enqueue_options.
 */
export { goDuration, goDurationNs, msToNs, parseGoDuration, parseGoDurationNs } from "./goDuration.js"
export { goJson, goQuote, goUnquote } from "./goQuote.js"
export { type GoZone, goUnixDate, type ParsedGoTime, parseGoUnixDate } from "./goTime.js"
export {
  optionsFromStrings,
  type OptionsFromStrings,
  optionString,
  type ParsedOption,
  parseOptionString
} from "./optionString.js"
