/**
 * PEER-LABEL-1: a recipient label made safe for a notice.
 * @param {string} raw
 * @returns {string}
 */
export function renderLabel(raw: string): string;
/**
 * PEER-NOTE-4: " to A, B and C" for the unique non-empty labels, at most three named.
 * @param {readonly string[]} recipients
 * @returns {string}
 */
export function peerRecipientSuffix(recipients: readonly string[]): string;
/**
 * PEER-NOTE-3: each reason's phrase once, in order of first occurrence; undefined is "no reason given".
 * @param {readonly (PeerDropReason | undefined)[]} reasons
 * @returns {string}
 */
export function describePeerDropReasons(reasons: readonly (PeerDropReason | undefined)[]): string;
/**
 * PEER-NOTE-1: the notice for `count` receipts of one non-drop state.
 * @param {Exclude<PeerDeliveryReceiptState, "dropped">} state
 * @param {number} count
 * @param {readonly string[]} [recipients]
 * @returns {string}
 */
export function renderCrossSessionDeliveryNotice(state: Exclude<PeerDeliveryReceiptState, "dropped">, count: number, recipients?: readonly string[]): string;
/**
 * PEER-NOTE-2: the notice for `count` messages dropped at the recipient's ingress guard.
 * @param {number} count
 * @param {readonly string[]} [recipients]
 * @param {readonly (PeerDropReason | undefined)[]} [reasons]
 * @returns {string}
 */
export function renderCrossSessionDroppedNotice(count: number, recipients?: readonly string[], reasons?: readonly (PeerDropReason | undefined)[]): string;
/**
 * PEER-EXP-2: undefined (absent), null and "default" give the default; a member gives itself; anything
 * else gives the default with `invalid` true.
 * @param {unknown} raw
 * @returns {ResolvedCrossSessionDialogExpiry}
 */
export function resolveCrossSessionDialogExpiry(raw: unknown): ResolvedCrossSessionDialogExpiry;
/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
export const NAME: "peer-delivery";
export const FEATURES: string[];
/** The held buffer's capacity per recipient session; a hold past it evicts (PEER-HOLD-2). */
export const PEER_HELD_QUEUE_CAP: 100;
/** The recipient box's capacity, checked at the send station (PEER-SEND-1). */
export const PEER_DELIVERY_BOX_CAP: 50;
/** The relay hops a message may have made before it is a runaway (PEER-JUDGE-1). */
export const PEER_MAX_HOPS: 4;
/** The `dialogExpiry` vocabulary (PEER-EXP-1). */
export const CROSS_SESSION_DIALOG_EXPIRY_VALUES: readonly ["60s", "5m", "10m", "never"];
/** @typedef {(typeof CROSS_SESSION_DIALOG_EXPIRY_VALUES)[number]} CrossSessionDialogExpiry */
/** @type {CrossSessionDialogExpiry} */
export const CROSS_SESSION_DIALOG_EXPIRY_DEFAULT: CrossSessionDialogExpiry;
/**
 * A resolved `dialogExpiry`: `invalid` is true when the input was outside the vocabulary and the
 * default applies, which the caller must announce (PEER-EXP-3).
 * @typedef {object} ResolvedCrossSessionDialogExpiry
 * @property {number | null} ms Milliseconds before a held message expires; null for `never`.
 * @property {CrossSessionDialogExpiry} value
 * @property {boolean} invalid
 */
/** The hold causes (PEER-CAUSE-1). */
export const CROSS_SESSION_HOLD_CAUSES: readonly ["inbound-hold", "starting-up", "mode-mismatch", "no-mode-asserted", "attestation-garbage"];
/** @typedef {(typeof CROSS_SESSION_HOLD_CAUSES)[number]} CrossSessionHoldCause */
/** @type {readonly CrossSessionHoldCause[]} The causes a human review resolves; only they arm a deadline (PEER-CAUSE-2). */
export const PEER_HELD_REVIEW_CAUSES: readonly CrossSessionHoldCause[];
/** The receipt states, in the spec's order (PEER-RCPT-1). */
export const PEER_DELIVERY_RECEIPT_STATES: readonly ["held", "denied", "expired", "delivered", "refused", "dropped"];
/** @typedef {(typeof PEER_DELIVERY_RECEIPT_STATES)[number]} PeerDeliveryReceiptState */
/** The drop reasons (PEER-RCPT-2); `queue-full` is never minted here (PEER-SEND-3). */
export const PEER_DROP_REASONS: readonly ["rate-limited", "duplicate", "hop-loop", "hop-runaway", "queue-full"];
/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_message" | "invalid_recipient" | "invalid_time"
 *   | "invalid_ticket" | "not_held" | "invalid_count" | "invalid_state" | "invalid_recipients"
 *   | "invalid_reasons" | "box_full"} PeerDeliveryErrorCode
 */
/** @extends {CodedError<PeerDeliveryErrorCode>} */
export class PeerDeliveryError extends CodedError<PeerDeliveryErrorCode> {
    constructor(code: PeerDeliveryErrorCode, message: string);
}
export function isPeerDeliveryReceiptState(v: unknown): v is PeerDeliveryReceiptState;
export class PeerDelivery {
    /** @param {unknown} config PEER-IF-1 */
    constructor(config: unknown);
    heldCap: number;
    boxCap: number;
    maxHops: number;
    /** @type {Record<string, boolean>} */
    options: Record<string, boolean>;
    /** @type {Recipient} */
    recipient: Recipient;
    now: number;
    box: number;
    /** @type {HeldEntry[]} */
    held: HeldEntry[];
    nextTicket: number;
    /** @type {number | null} */
    expiryMs: number | null;
    /**
     * PEER-EXP-4, PEER-OPT-3. The sum is exact: a BigInt past 2^53 - 1 (a clock near the top of its
     * range), which compares with the clock's numbers exactly and is written out as its digits.
     * @param {CrossSessionHoldCause} cause @returns {number | bigint | null}
     */
    deadline(cause: CrossSessionHoldCause): number | bigint | null;
    /** @param {Receipt[]} receipts @param {Record<string, unknown>} [extra] @returns {DeliveryState} */
    state(receipts: Receipt[], extra?: Record<string, unknown>): DeliveryState;
    /** The buffer as an output lists it, oldest first (PEER-IF-2). @returns {HeldOutput[]} */
    heldOutput(): HeldOutput[];
    /** @param {Args} args */
    send_message({ sender, sender_mode, attestation, hops, loop, duplicate, rate_limited }: Args): DeliveryState;
    /** @param {Args} args PEER-SET-1 */
    set_recipient({ setting, starting_up, mode }: Args): DeliveryState;
    /** @param {Args} args PEER-EXP-2, PEER-EXP-3: an absent value is undefined, the seed's "not given". */
    set_dialog_expiry(args: Args): DeliveryState;
    /** @param {Args} args PEER-TIME-1 */
    advance({ now_ms }: Args): DeliveryState;
    drain(): DeliveryState;
    /** @param {unknown} ticket @returns {number} the entry's index (PEER-HOLD-4) */
    find(ticket: unknown): number;
    /** @param {Args} args PEER-HOLD-3, PEER-HOLD-5, PEER-OPT-2 */
    approve({ ticket }: Args): DeliveryState;
    /** @param {Args} args PEER-HOLD-3 */
    deny({ ticket }: Args): DeliveryState;
    /** @param {Args} args PEER-HOLD-6 */
    take({ count }: Args): DeliveryState;
}
export type RecipientSetting = "accept" | "hold" | "refuse" | null;
export type Recipient = {
    setting: RecipientSetting;
    startingUp: boolean;
    mode: string | null;
};
/**
 * What the sender's host says about one message (the `send_message` arguments).
 */
export type MessageFacts = {
    sender: string;
    senderMode: string | null;
    attestation: "valid" | "garbage" | "absent";
    hops: number;
    loop: boolean;
    duplicate: boolean;
    rateLimited: boolean;
};
export type Verdict = {
    state: "dropped";
    reason: PeerDropReason;
} | {
    state: "refused" | "delivered";
} | {
    state: "held";
    cause: CrossSessionHoldCause;
};
/**
 * PEER-IF-2
 */
export type Receipt = {
    ticket: number;
    sender: string;
    state: PeerDeliveryReceiptState;
    cause: CrossSessionHoldCause | null;
    reason: PeerDropReason | null;
};
export type HeldEntry = {
    ticket: number;
    facts: MessageFacts;
    cause: CrossSessionHoldCause;
    deadline: number | bigint | null;
};
export type HeldOutput = {
    ticket: number;
    sender: string;
    cause: CrossSessionHoldCause;
    deadline_ms: number | bigint | null;
};
/**
 * PEER-IF-2: the state block every stateful event's output carries.
 */
export type DeliveryState = {
    receipts: Receipt[];
    held: HeldOutput[];
    box: number;
};
export type Args = import("./protocol.mjs").Args;
export type CrossSessionDialogExpiry = (typeof CROSS_SESSION_DIALOG_EXPIRY_VALUES)[number];
/**
 * A resolved `dialogExpiry`: `invalid` is true when the input was outside the vocabulary and the
 * default applies, which the caller must announce (PEER-EXP-3).
 */
export type ResolvedCrossSessionDialogExpiry = {
    /**
     * Milliseconds before a held message expires; null for `never`.
     */
    ms: number | null;
    value: CrossSessionDialogExpiry;
    invalid: boolean;
};
export type CrossSessionHoldCause = (typeof CROSS_SESSION_HOLD_CAUSES)[number];
export type PeerDeliveryReceiptState = (typeof PEER_DELIVERY_RECEIPT_STATES)[number];
export type PeerDropReason = (typeof PEER_DROP_REASONS)[number];
export type PeerDeliveryErrorCode = "invalid_config" | "invalid_argument" | "invalid_message" | "invalid_recipient" | "invalid_time" | "invalid_ticket" | "not_held" | "invalid_count" | "invalid_state" | "invalid_recipients" | "invalid_reasons" | "box_full";
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
export type StatefulEvent = "send_message" | "set_recipient" | "set_dialog_expiry" | "advance" | "drain" | "approve" | "deny" | "take";
export type PureCall = (args: Args) => Record<string, unknown>;
import { CodedError } from "./protocol.mjs";
