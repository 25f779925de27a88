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
