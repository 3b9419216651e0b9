/**
 * How the process logs: LOG_FORMAT `pretty` (one readable line each), `json` (one JSON object a line,
 * for a collector), or `auto` (the default): pretty when stdout is a terminal, JSON when it is not
 * (a pipe, a file, a container's log driver).
 */
import { Logger } from "effect"

export type LogFormatSetting = "auto" | "json" | "pretty"

/** The format `auto` stands for, given whether stdout is a terminal. */
export const resolveLogFormat = (setting: LogFormatSetting, stdoutIsTty: boolean): "json" | "pretty" =>
  setting === "auto" ? (stdoutIsTty ? "pretty" : "json") : setting

/** The logger layer of that format. */
export const loggerLayer = (format: "json" | "pretty") =>
  Logger.layer([format === "pretty" ? Logger.consolePretty() : Logger.consoleJson])
