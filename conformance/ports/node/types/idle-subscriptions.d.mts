/**
 * IDLE-LABEL-1..6: a label or detail line made safe to quote in a notice; undefined when nothing
 * printable is left.
 * @param {string} raw
 * @returns {string | undefined}
 */
export function peerIdleNoticeLabel(raw: string): string | undefined;
/**
 * IDLE-CLOCK-1..3: HH:MM, 24-hour, of the minute holding `epochMs` at the reader's fixed UTC offset
 * (in minutes, default 0); `--:--` when there is no time.
 * @param {number | undefined} epochMs
 * @param {number} [utcOffsetMin]
 * @returns {string}
 */
export function formatPeerNoticeClock(epochMs: number | undefined, utcOffsetMin?: number): string;
/**
 * IDLE-TEXT-1..4, IDLE-TEXT-8: the one-line notice the requester's model reads. The label and
 * detail are used as given; the clock is read at the reader's UTC offset (minutes, default 0).
 * @param {PeerIdleNoticeFields} n
 * @param {number} [utcOffsetMin]
 * @returns {string}
 */
export function renderCrossSessionIdleNotice(n: PeerIdleNoticeFields, utcOffsetMin?: number): string;
/**
 * IDLE-TEXT-7: the host-facing line that a peer subscribed to this session's idle notices; no
 * detail of the last turn is shared unless `detailShared`.
 * @param {string} address
 * @param {boolean} [detailShared]
 * @returns {string}
 */
export function describePeerIdleSubscription(address: string, detailShared?: boolean): string;
/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
export const FEATURES: string[];
/** A subscription's time to live on both halves, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_SUBSCRIPTION_TTL_MS: 43200000;
/** The target half's subscriber table cap (IDLE-DEF-1). */
export const PEER_IDLE_SUBSCRIBER_TABLE_CAP: 32;
/** The requester half's outstanding table cap (IDLE-DEF-1). */
export const PEER_IDLE_OUTSTANDING_CAP: 32;
/** Earlier outstanding subscriptions to the same target a requester keeps (IDLE-DEF-1). */
export const PEER_IDLE_PRIORS_KEPT: 3;
/** The settle window after a turn finishes before the idle answer, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_FIRE_DEBOUNCE_MS: 750;
/** The re-check cadence while messages are held for review, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_HELD_BACKOFF_MS: 30000;
/** The sanitised label's length cap, in code points (IDLE-LABEL-4). */
export const PEER_IDLE_LABEL_MAX: 100;
/** The four notice kinds (IDLE-TEXT-5). */
export const PEER_IDLE_NOTICE_KINDS: readonly ["idle", "exited", "unavailable", "expired"];
/** @typedef {(typeof PEER_IDLE_NOTICE_KINDS)[number]} PeerIdleNoticeKind */
/** The sentence an `unavailable` notice gives as its causes (IDLE-TEXT-3). */
export const PEER_IDLE_UNAVAILABLE_CAUSES: "it is shutting down, its subscription table is full, a newer subscription displaced this one, or it answered in a form this version does not recognize";
/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_time" | "target_closed" | "turn_in_progress"
 *   | "no_turn" | "duplicate_subscription"} IdleErrorCode
 */
/** @extends {CodedError<IdleErrorCode>} */
export class IdleError extends CodedError<IdleErrorCode> {
    constructor(code: IdleErrorCode, message: string);
}
export function isPeerIdleNoticeKind(v: unknown): v is PeerIdleNoticeKind;
export class IdleSubscriptions {
    /** @param {unknown} config */
    constructor(config: unknown);
    /** @type {IdleConfig} every value checked above */
    c: IdleConfig;
    /** @type {Record<string, unknown>} */
    options: Record<string, unknown>;
    /** IDLE-OPT-5: the sanitiser folds lookalikes. */
    foldLookalikes: boolean;
    now: number;
    /** @type {Map<number, Outstanding>} */
    outstanding: Map<number, Outstanding>;
    /** @type {Map<string, Subscriber>} keyed by requester */
    subscribers: Map<string, Subscriber>;
    /** @type {Phase} */
    phase: Phase;
    /** @type {number | null} */
    fireAt: number | null;
    /** @type {number | null} */
    finishedAt: number | null;
    /** @type {string | null} */
    detail: string | null;
    held: number;
    /** @type {number | null} */
    closedAt: number | null;
    snapshot(): {
        phase: Phase;
        outstanding: number;
        subscribers: number;
    };
    /**
     * The requester's notice for one resolved subscription, through the seed-named renderer.
     * @param {Outstanding} held @param {PeerIdleNoticeKind} kind @param {number | null} finishedAt @param {string | null} detail
     * @returns {Notice}
     */
    render(held: Outstanding, kind: PeerIdleNoticeKind, finishedAt: number | null, detail: string | null): Notice;
    /** @param {Args} args @param {Effects} fx IDLE-REQ-1..3 */
    subscribe({ target, subscription: id, label }: Args, fx: Effects): {
        verdict: string;
        pushed_out: number | null;
    };
    /** @param {Args} args @param {Effects} fx IDLE-REQ-5..8 */
    receiveNotice({ subscription, notice, from }: Args, fx: Effects): {
        resolved: boolean;
    };
    /** @param {Args} args @param {Effects} fx IDLE-TGT-1..4, IDLE-END-3 */
    addSubscriber({ requester, subscription, parity }: Args, fx: Effects): {
        accepted: boolean;
        displaced: null;
        announcement: null;
    } | {
        accepted: boolean;
        displaced: number | null;
        announcement: string;
    };
    open(): void;
    turnStarted(): {};
    /** @param {Args} args IDLE-FIRE-1 */
    turnFinished({ last_turn_text: text }: Args): {};
    /** @param {Args} args IDLE-HELD-1, IDLE-OPT-3 */
    setHeld({ count }: Args): {};
    /** @param {"exited" | "shut_down"} phase @param {"exited" | "unavailable"} kind @param {Effects} fx IDLE-END-1/2 */
    close(phase: "exited" | "shut_down", kind: "exited" | "unavailable", fx: Effects): {};
    /** @param {Args} args @param {Effects} fx IDLE-TIME-1/2 */
    advance({ now_ms: now }: Args, fx: Effects): {};
}
export type PeerIdleNoticeKind = (typeof PEER_IDLE_NOTICE_KINDS)[number];
/**
 * What one idle notice says (IDLE-TEXT-2). `label` and `detail` are already through
 * peerIdleNoticeLabel; `finishedAt` (epoch milliseconds) is read for `idle` and `exited` only,
 * `detail` for `idle` only.
 */
export type PeerIdleNoticeFields = {
    kind: PeerIdleNoticeKind;
    label: string;
    finishedAt?: number | undefined;
    detail?: string | undefined;
};
/**
 * IDLE-CONF-1: every key, after the interface data's defaults and the checks of the constructor.
 */
export type IdleConfig = {
    start_ms: number;
    ttl_ms: number;
    outstanding_cap: number;
    priors_kept: number;
    subscriber_cap: number;
    debounce_ms: number;
    held_backoff_ms: number;
    reader_utc_offset_min: number;
    last_turn_text_seat: boolean;
};
export type IdleErrorCode = "invalid_config" | "invalid_argument" | "invalid_time" | "target_closed" | "turn_in_progress" | "no_turn" | "duplicate_subscription";
export type AnswerKind = "idle" | "exited" | "unavailable";
export type Answer = {
    kind: AnswerKind;
    finishedAt: number | null;
    detail: string | null;
};
export type Outstanding = {
    id: number;
    target: string;
    label: string;
    sentAt: number;
};
export type Subscriber = {
    requester: string;
    subscription: number;
    addedAt: number;
    parity: boolean;
};
export type SentAnswer = {
    to: string;
    subscription: number;
    kind: AnswerKind;
    finished_at: number | null;
    detail: string | null;
};
export type Notice = {
    subscription: number;
    kind: PeerIdleNoticeKind;
    text: string;
};
export type Effects = {
    notices: Notice[];
    sent: SentAnswer[];
    swept: {
        requester: string;
        subscription: number;
    }[];
};
export type Phase = "idle" | "busy" | "settling" | "backing_off" | "exited" | "shut_down";
export type Args = import("./protocol.mjs").Args;
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
import { CodedError } from "./protocol.mjs";
