import * as functionsLogger from "firebase-functions/logger";

/**
 * Structured logging. Fields are whitelisted by the call sites: request logs carry the request
 * id, method, path, status, latency and uid, never headers, bodies, tokens or passwords.
 */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** Cloud Logging structured entries (JSON lines with severity when run outside Google Cloud). */
export const cloudLogger: Logger = {
  info: (message, fields) => functionsLogger.info(message, fields ?? {}),
  warn: (message, fields) => functionsLogger.warn(message, fields ?? {}),
  error: (message, fields) => functionsLogger.error(message, fields ?? {}),
};

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
