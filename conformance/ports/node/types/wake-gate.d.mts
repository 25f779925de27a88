/**
 * WAKE-MSG-1: exactly kind, from, to, text.
 * @param {unknown} raw
 * @returns {AgentMessage}
 */
export function parseMessage(raw: unknown): AgentMessage;
/**
 * WAKE-IF-1: the policy a protocol config `{max_streak, floor_ms, options}` describes, on the
 * host's clock; an unknown key, a null or a bad value is `invalid_config`. The host machine
 * (host.mjs) builds each session's gate through this too.
 * @param {unknown} config @param {() => number} clock
 * @returns {InboxWakePolicy}
 */
export function policyFromConfig(config: unknown, clock: () => number): InboxWakePolicy;
/**
 * The port's side of one case: config and steps in, {outputs} or {config_error} out.
 * @param {Record<string, unknown>} config
 * @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
/** The anti-storm cap on consecutive inbox wakes without user input (WAKE-DEF-1). */
export const defaultMaxInboxWakeStreak: 10;
/** Scheduled self-wakes closer together than this many milliseconds are a spin (WAKE-DEF-1). */
export const defaultScheduledSelfCadenceFloor: 30000;
/** What a scheduled self-reminder's text starts with (WAKE-SELF-1). */
export const SCHEDULED_PREFIX: "[scheduled] ";
/**
 * One pending message, as WAKE-MSG-1 shapes it.
 * @typedef {{ kind: string, from: string, to: string, text: string }} AgentMessage
 */
/** @typedef {"userInput" | "scheduledSelf" | "chatter"} InboxWakeLane */
/** @typedef {"chatter_cap" | "self_spin_cap"} InboxWakeRefusalCode */
/**
 * The decision for one pending batch (WAKE-OUT-1). `refusalReason` and `refusalCode` are null
 * exactly when `wake` is true.
 * @typedef {object} InboxWakeDecision
 * @property {InboxWakeLane} lane
 * @property {boolean} wake
 * @property {boolean} countsAgainstCap
 * @property {string | null} refusalReason
 * @property {InboxWakeRefusalCode | null} refusalCode
 */
/**
 * The behaviour options from the spec's findings; each is false unless set.
 * @typedef {object} InboxWakeOptions
 * @property {boolean} [announce_requires_refusal]
 * @property {boolean} [cadence_from_allowed_wakes]
 * @property {boolean} [clamp_backwards_clock]
 * @property {boolean} [reject_empty_batch]
 */
/**
 * @typedef {object} InboxWakePolicySettings
 * @property {() => number} clock The current time in integer milliseconds; the host's, never the policy's.
 * @property {number} [maxStreak] Consecutive chatter wakes allowed without user input.
 * @property {number} [scheduledSelfCadenceFloor] In milliseconds.
 * @property {InboxWakeOptions} [options]
 */
/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_batch" | "invalid_message" | "invalid_time"
 *   | "invalid_streak" | "invalid_floor" | "empty_batch"} WakeGateErrorCode
 */
/** @extends {CodedError<WakeGateErrorCode>} */
export class WakeGateError extends CodedError<WakeGateErrorCode> {
    constructor(code: WakeGateErrorCode, message: string);
}
export class InboxWakePolicy {
    /**
     * WAKE-SELF-1: the delivery of a scheduled self-reminder.
     * @param {AgentMessage} message
     * @returns {boolean}
     */
    static isScheduledSelfMail(message: AgentMessage): boolean;
    /**
     * WAKE-IF-1: absent settings take the defaults; a null or a bad value is `invalid_config`.
     * @param {InboxWakePolicySettings} settings
     */
    constructor(settings: InboxWakePolicySettings);
    /** The injected clock: the current time in integer milliseconds. */
    get clock(): () => number;
    /** Consecutive chatter wakes allowed without user input; fixed at construction. */
    get maxStreak(): number;
    /** WAKE-HOST-1: a host may restore the streak; anything but a safe integer below 2^53 - 1 is `invalid_streak`. */
    set streak(value: number);
    /** Consecutive inbox-triggered wakes without user input. */
    get streak(): number;
    /** WAKE-HOST-2: zero makes every self-wake exempt; anything but a safe natural is `invalid_floor`. */
    set scheduledSelfCadenceFloor(value: number);
    /** The minimum spacing of exempt scheduled self-wakes, in milliseconds. */
    get scheduledSelfCadenceFloor(): number;
    /**
     * Decides, and books, the wake for one pending batch at the clock's current time.
     * Faults in the order of WAKE-IF-5: batch shape, each message, the time, pluginPending, empty batch.
     * @param {readonly AgentMessage[]} pending
     * @param {{ pluginPending?: boolean }} [flags]
     * @returns {InboxWakeDecision}
     */
    wakeDecisionFor(pending: readonly AgentMessage[], { pluginPending }?: {
        pluginPending?: boolean;
    }): InboxWakeDecision;
    /**
     * True exactly once per refusal episode (WAKE-ANN-1, WAKE-ANN-2, WAKE-OPT-1).
     * @returns {boolean}
     */
    announceRefusal(): boolean;
    /**
     * The user is talking: the streak is 0 and the refusal episode ends (WAKE-RESET-1).
     * @returns {void}
     */
    resetStreak(): void;
    #private;
}
export const FEATURES: string[];
/**
 * One pending message, as WAKE-MSG-1 shapes it.
 */
export type AgentMessage = {
    kind: string;
    from: string;
    to: string;
    text: string;
};
export type InboxWakeLane = "userInput" | "scheduledSelf" | "chatter";
export type InboxWakeRefusalCode = "chatter_cap" | "self_spin_cap";
/**
 * The decision for one pending batch (WAKE-OUT-1). `refusalReason` and `refusalCode` are null
 * exactly when `wake` is true.
 */
export type InboxWakeDecision = {
    lane: InboxWakeLane;
    wake: boolean;
    countsAgainstCap: boolean;
    refusalReason: string | null;
    refusalCode: InboxWakeRefusalCode | null;
};
/**
 * The behaviour options from the spec's findings; each is false unless set.
 */
export type InboxWakeOptions = {
    announce_requires_refusal?: boolean | undefined;
    cadence_from_allowed_wakes?: boolean | undefined;
    clamp_backwards_clock?: boolean | undefined;
    reject_empty_batch?: boolean | undefined;
};
export type InboxWakePolicySettings = {
    /**
     * The current time in integer milliseconds; the host's, never the policy's.
     */
    clock: () => number;
    /**
     * Consecutive chatter wakes allowed without user input.
     */
    maxStreak?: number | undefined;
    /**
     * In milliseconds.
     */
    scheduledSelfCadenceFloor?: number | undefined;
    options?: InboxWakeOptions | undefined;
};
export type WakeGateErrorCode = "invalid_config" | "invalid_argument" | "invalid_batch" | "invalid_message" | "invalid_time" | "invalid_streak" | "invalid_floor" | "empty_batch";
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
import { CodedError } from "./protocol.mjs";
