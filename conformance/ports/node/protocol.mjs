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
  const outputs = [];
  let size = 0;
  for (const [index, step] of steps.entries()) {
    const output = apply(session, step);
    size += jsonLength(output);
    if (size > MAX_CASE_OUTPUT_BYTES) {
      throw new Error(`the outputs of this case pass ${MAX_CASE_OUTPUT_BYTES.toLocaleString("en-US")} bytes of JSON `
        + `at step ${index + 1} of ${steps.length}: beyond what the suite compares (PROTO-RUN-5)`);
    }
    outputs.push(output);
  }
  return { outputs };
}

/**
 * PROTO-RUN-5: the most JSON one case's outputs come to; past it the case is answered `errored`
 * (the adapter's reply to a thrown error) at the step that passes it, before the next one runs.
 * Outputs repeat what a machine holds at every step, so a case file of a few megabytes could ask
 * for more than V8's longest string, and the adapter crashed.
 */
export const MAX_CASE_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * The length of `value` as PROTO-RUN-5 measures it: compact JSON with every character past ASCII
 * escaped, DEL included. JSON.stringify escapes the other control characters and lone surrogates
 * so already; DEL and each UTF-16 unit past ASCII (a surrogate pair is two) becomes its
 * six-character `\uXXXX`.
 * @param {unknown} value
 */
export function jsonLength(value) {
  const text = toJson(value);
  let length = text.length;
  if (/[^\x00-\x7e]/.test(text)) {
    for (let unit = 0; unit < text.length; unit += 1) {
      if (text.charCodeAt(unit) > 0x7e) length += 5;
    }
  }
  return length;
}

/**
 * `value` as compact JSON, as `JSON.stringify` writes it, with a BigInt written as its digits: the one
 * output past 2^53 - 1, peer delivery's deadline (PEER-EXP-4), is an exact integer, which a double
 * would round. `JSON.stringify` refuses a BigInt (a TypeError), so only a value holding one is
 * written by the walk below.
 * @param {unknown} value
 * @returns {string}
 */
export function toJson(value) {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return withBigInts(value);
  }
}

/** @param {unknown} value @returns {string} */
function withBigInts(value) {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : withBigInts(item))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value).filter(([, item]) => item !== undefined && typeof item !== "function");
    return `{${members.map(([key, item]) => `${JSON.stringify(key)}:${withBigInts(item)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
