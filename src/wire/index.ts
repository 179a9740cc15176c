/**
 * asynq's wire format (`effect-asynq/wire`, and `Wire` in `effect-asynq`): Redis key names, the
 * protobuf messages (TaskMessage, ServerInfo, WorkerInfo, SchedulerEntry, SchedulerEnqueueEvent),
 * payload encoding, unique keys and asynq's option strings. Encoding internals (protobuf field
 * writers, Go text formatting) stay inside the library.
 */
export * from "./keys.js"
export { decodeTaskMessage, emptyTaskMessage, encodeTaskMessage, type TaskMessage } from "./TaskMessage.js"
export * from "./ServerInfo.js"
export * from "./WorkerInfo.js"
export * from "./SchedulerEntry.js"
export * from "./SchedulerEnqueueEvent.js"
export {
  epoch,
  goZeroTime,
  isGoZeroTime,
  type Timestamp,
  timestampFromDate,
  timestampFromMillis,
  timestampToDate,
  timestampToMillis
} from "./Timestamp.js"
export * from "./errors.js"
export * from "./payload.js"
export * from "./uniqueKey.js"
export {
  optionString,
  optionsFromStrings,
  type OptionsFromStrings,
  type ParsedOption,
  parseOptionString
} from "./optionString.js"
