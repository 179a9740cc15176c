export {
  ExecutionNotFound,
  InvalidArgument,
  InvalidState,
  NotACluster,
  QueueNotEmpty,
  QueueNotFound,
  TaskNotFound
} from "../broker/errors.js"
