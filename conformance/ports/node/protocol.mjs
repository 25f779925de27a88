// @ts-check
// The harness protocol's side of a machine module (spec/conformance-protocol.md): the shapes of a
// case's steps and result that every module's runCase shares, the typed error whose code an
// output's `error` (or the case's `config_error`) carries, and the one way a case is run.

/** @typedef {Record<string, unknown>} Args */
/** @typedef {{ event: string, args?: Args }} Step */
/** PROTO-RUN-2: one output a step, or the config error. @typedef {{ outputs: Record<string, unknown>[] } | { config_error: string }} CaseResult */

/**
 * A machine's typed error: `code` is the error code its outputs carry.
 * @template {string} Code
 */
export class CodedError extends Error {
  /** @param {Code} code @param {string} message */
  constructor(code, message) {
    super(message);
    /** @readonly */
    this.code = code;
  }
}

/**
 * PROTO-RUN-2: the session `open` makes of a case's config, then one output a step. A typed error
 * of the machine's (an instance of `ConfigError`) while opening is the case's config error; any
 * other error is the adapter's own.
 * @template S
 * @param {abstract new (...args: any[]) => CodedError<string>} ConfigError
 * @param {() => S} open
 * @param {(session: S, step: Step) => Record<string, unknown>} apply
 * @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runSteps(ConfigError, open, apply, steps) {
  let session;
  try {
    session = open();
  } catch (error) {
    if (error instanceof ConfigError) return { config_error: error.code };
    throw error;
  }
  return { outputs: steps.map((step) => apply(session, step)) };
}
