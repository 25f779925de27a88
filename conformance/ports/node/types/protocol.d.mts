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
export function runSteps<S>(ConfigError: abstract new (...args: any[]) => CodedError<string>, open: () => S, apply: (session: S, step: Step) => Record<string, unknown>, steps: Step[]): CaseResult;
/**
 * The length of `value` as PROTO-RUN-5 measures it: compact JSON with every character past ASCII
 * escaped, DEL included. JSON.stringify escapes the other control characters and lone surrogates
 * so already; DEL and each UTF-16 unit past ASCII (a surrogate pair is two) becomes its
 * six-character `\uXXXX`.
 * @param {unknown} value
 */
export function jsonLength(value: unknown): number;
/**
 * `value` as compact JSON, as `JSON.stringify` writes it, with a BigInt written as its digits: the one
 * output past 2^53 - 1, peer delivery's deadline (PEER-EXP-4), is an exact integer, which a double
 * would round. `JSON.stringify` refuses a BigInt (a TypeError), so only a value holding one is
 * written by the walk below.
 * @param {unknown} value
 * @returns {string}
 */
export function toJson(value: unknown): string;
/** @typedef {Record<string, unknown>} Args */
/** @typedef {{ event: string, args?: Args }} Step */
/** PROTO-RUN-2: one output a step, or the config error. @typedef {{ outputs: Record<string, unknown>[] } | { config_error: string }} CaseResult */
/**
 * A machine's typed error: `code` is the error code its outputs carry.
 * @template {string} Code
 */
export class CodedError<Code extends string> extends Error {
    /** @param {Code} code @param {string} message */
    constructor(code: Code, message: string);
    /** @readonly */
    readonly code: Code;
}
/**
 * PROTO-RUN-5: the most JSON one case's outputs come to; past it the case is answered `errored`
 * (the adapter's reply to a thrown error) at the step that passes it, before the next one runs.
 * Outputs repeat what a machine holds at every step, so a case file of a few megabytes could ask
 * for more than V8's longest string, and the adapter crashed.
 */
export const MAX_CASE_OUTPUT_BYTES: number;
export type Args = Record<string, unknown>;
export type Step = {
    event: string;
    args?: Args;
};
/**
 * PROTO-RUN-2: one output a step, or the config error.
 */
export type CaseResult = {
    outputs: Record<string, unknown>[];
} | {
    config_error: string;
};
