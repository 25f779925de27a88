/**
 * The port's side of one case: config and steps in, {outputs} or {config_error} out.
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config: Record<string, unknown>, steps: Step[]): CaseResult;
export const NAME: "host";
/** The host's finding options (HOST-OPT-1..4), each a feature tag. */
export const FEATURES: string[];
/**
 * @typedef {"invalid_config" | "invalid_argument" | "unknown_session" | "invalid_target" | "invalid_claim"
 *   | "invalid_text" | "invalid_delay" | "invalid_time" | "invalid_ticket" | "invalid_setting" | "not_in_turn"
 *   | "turn_limit" | "reminder_limit" | "not_held" | "box_full"} HostErrorCode
 */
/** @extends {CodedError<HostErrorCode>} */
export class HostError extends CodedError<HostErrorCode> {
    constructor(code: HostErrorCode, message: string);
}
export class Host {
    /**
     * HOST-IF-1: a composed machine's config error is the host's `invalid_config`.
     * @param {Record<string, unknown>} config
     */
    constructor(config: Record<string, unknown>);
    options: Record<string, boolean>;
    turnActionLimit: number | null;
    reminderLimit: number | null;
    clock: number;
    nextSubscription: number;
    /** @type {Map<number, string>} each subscription id's target, for its notices' `about` (HOST-IDLE-2) */
    subscriptionTargets: Map<number, string>;
    reminders: ReminderBook;
    /** @type {Session[]} in config order */
    sessions: Session[];
    /** @param {string} address @returns {Session} */
    session(address: string): Session;
    /** @returns {Record<string, SessionState>} HOST-IF-2 */
    state(): Record<string, SessionState>;
    /**
     * HOST-LINE-1, HOST-OPT-2, HOST-OPT-3: a harness line to `to`, about `about`.
     * @param {string} to @param {string} about @param {string} text @param {HostRecord[]} records
     */
    line(to: string, about: string, text: string, records: HostRecord[]): void;
    /**
     * HOST-RCPT-1, HOST-SEND-3: each receipt of a recipient's peer delivery, recorded and told to
     * its true origin; a delivered message joins the recipient's pending mail.
     * @param {Session} recipient @param {import("./peer-delivery.mjs").Receipt[]} receipts
     * @param {HostRecord[]} records
     */
    receipts(recipient: Session, receipts: import("./peer-delivery.mjs").Receipt[], records: HostRecord[]): void;
    /**
     * HOST-IDLE-2: the notices a requester half hands its model, as harness lines about the target.
     * @param {Session} requester @param {IdleEffects["notices"]} notices @param {HostRecord[]} records
     */
    notices(requester: Session, notices: IdleEffects["notices"], records: HostRecord[]): void;
    /**
     * HOST-IDLE-2: each answer a target half sends, recorded and carried at once to the requester.
     * @param {Session} target @param {IdleEffects["sent"]} sent @param {HostRecord[]} records
     */
    answers(target: Session, sent: IdleEffects["sent"], records: HostRecord[]): void;
    /** HOST-IDLE-1: after every step, each idle half learns a changed held count, in config order. */
    syncHeld(): void;
    /**
     * HOST-TURN-1 (and HOST-TURN-3's `reminder_limit`): the state checks of a turn action.
     * @param {Session} s @param {string} event
     */
    checkTurn(s: Session, event: string): void;
    /**
     * HOST-TURN-3: a due time is a clock reading, so it is a safe integer; checked after
     * `reminder_limit`. Both terms are safe integers, so the subtraction is exact in doubles.
     * @param {number} delayMs
     */
    checkDue(delayMs: number): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-WAKE-4 */
    user_input(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-WAKE-1..3 */
    tick(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TIME-1 */
    advance(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-SEND-1..4 */
    send_message(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-3 */
    schedule(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-4 */
    subscribe(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-2 */
    end_turn(a: Record<string, any>, records: HostRecord[]): void;
    /**
     * HOST-ENV-1: the recipient user acts on its own buffer; peer delivery's errors are the host's.
     * @param {"approve" | "deny"} which @param {Record<string, any>} a @param {HostRecord[]} records
     */
    release(which: "approve" | "deny", a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records */
    approve(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records */
    deny(a: Record<string, any>, records: HostRecord[]): void;
    /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-ENV-2 */
    set_setting(a: Record<string, any>, records: HostRecord[]): void;
    /**
     * HOST-IF-5's argument checks, in the event's argument order, each with its own code: the
     * interface type first, then what the type's label says of an address.
     * @param {import("./interface-data.mjs").InterfaceEvent} defined @param {Record<string, unknown>} args
     */
    checkArguments(defined: import("./interface-data.mjs").InterfaceEvent, args: Record<string, unknown>): void;
    /**
     * One step: {events, sessions}, or {error, sessions} with nothing changed (HOST-IF-4).
     * @param {Step} step
     * @returns {Record<string, unknown>}
     */
    apply({ event, args }: Step): Record<string, unknown>;
}
export type HostErrorCode = "invalid_config" | "invalid_argument" | "unknown_session" | "invalid_target" | "invalid_claim" | "invalid_text" | "invalid_delay" | "invalid_time" | "invalid_ticket" | "invalid_setting" | "not_in_turn" | "turn_limit" | "reminder_limit" | "not_held" | "box_full";
export type Step = import("./protocol.mjs").Step;
export type CaseResult = import("./protocol.mjs").CaseResult;
export type AgentMessage = import("./wake-gate.mjs").AgentMessage;
export type HeldOutput = import("./peer-delivery.mjs").HeldOutput;
export type Setting = "accept" | "hold" | "refuse" | null;
export type LineDelivery = "user" | "agent" | "next_turn";
/**
 * One pending message, and whether it came through peer delivery (so that the turn `take`s it).
 */
export type Pending = {
    message: AgentMessage;
    peer: boolean;
};
/**
 * A message of a peer delivery's buffer, as the host remembers it by ticket (HOST-SEND-3).
 */
export type InFlight = {
    origin: string;
    text: string;
};
export type Reminder = {
    session: string;
    due: number;
    text: string;
};
/**
 * A record of `events` (HOST-IF-3).
 */
export type HostRecord = Record<string, unknown> & {
    type: string;
};
/**
 * HOST-IF-2: one session's state in every output.
 */
export type SessionState = {
    phase: "idle" | "turn";
    pending: number;
    shown: number;
    held: number;
    streak: number;
};
/**
 * What one idle-subscriptions event hands back (IDLE-OUT-1).
 */
export type IdleEffects = import("./idle-subscriptions.mjs").Effects;
export type HostEvent = "user_input" | "tick" | "advance" | "send_message" | "schedule" | "subscribe" | "end_turn" | "approve" | "deny" | "set_setting";
import { CodedError } from "./protocol.mjs";
/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */
/** @typedef {import("./wake-gate.mjs").AgentMessage} AgentMessage */
/** @typedef {import("./peer-delivery.mjs").HeldOutput} HeldOutput */
/** @typedef {"accept" | "hold" | "refuse" | null} Setting */
/** @typedef {"user" | "agent" | "next_turn"} LineDelivery */
/**
 * One pending message, and whether it came through peer delivery (so that the turn `take`s it).
 * @typedef {{ message: AgentMessage, peer: boolean }} Pending
 */
/** A message of a peer delivery's buffer, as the host remembers it by ticket (HOST-SEND-3). @typedef {{ origin: string, text: string }} InFlight */
/** @typedef {{ session: string, due: number, text: string }} Reminder */
/**
 * The reminders scheduled and not yet joined to their session's pending mail (HOST-TURN-3).
 * A case file may hold hundreds of thousands of `schedule` steps, so no step costs in proportion
 * to the reminders waiting: each session's count is kept, and the reminders wait in a binary heap
 * by due time, then scheduling number, so that `fallDue` takes only the due ones and gives them
 * in scheduling order (HOST-TIME-1 step 3).
 */
declare class ReminderBook {
    /** @type {{ due: number, number: number, reminder: Reminder }[]} a heap: each entry before its two children */
    heap: {
        due: number;
        number: number;
        reminder: Reminder;
    }[];
    scheduled: number;
    /** @type {Map<string, number>} */
    counts: Map<string, number>;
    /** @param {string} session how many of its reminders are waiting, due or not */
    waiting(session: string): number;
    /** @param {Reminder} reminder */
    schedule(reminder: Reminder): void;
    /** @param {number} now the reminders due at `now`, taken out, in scheduling order */
    fallDue(now: number): Reminder[];
}
/** HOST-TERM-1: one configured address and its machines. */
declare class Session {
    /**
     * @param {string} address
     * @param {{ wake_gate: unknown, peer_delivery: unknown, idle_subscriptions: unknown }} parts
     * @param {() => number} clock the host's one clock (HOST-TIME-1)
     */
    constructor(address: string, parts: {
        wake_gate: unknown;
        peer_delivery: unknown;
        idle_subscriptions: unknown;
    }, clock: () => number);
    address: string;
    /** @type {InboxWakePolicy} */
    gate: InboxWakePolicy;
    delivery: SessionDelivery;
    idle: IdleSubscriptions;
    /** @type {Pending[]} HOST-TERM-2, in arrival order */
    pending: Pending[];
    /** @type {string[]} harness lines waiting for the next turn (HOST-OPT-3) */
    shown: string[];
    /** @type {"idle" | "turn"} */
    phase: "idle" | "turn";
    /** The current turn's actions (HOST-TURN-1). */
    actions: number;
    /** What the idle half last got from `set_held` (HOST-IDLE-1); it starts with nothing held. */
    heldTold: number;
    /** @type {Map<number, InFlight>} the messages this session's peer delivery has not yet settled, by ticket */
    inFlight: Map<number, InFlight>;
    /** @returns {SessionState} */
    state(): SessionState;
}
import { InboxWakePolicy } from "./wake-gate.mjs";
/**
 * A session's peer delivery, whose step results list no held buffer. The host reads a result's
 * receipts, ticket and send error alone, and counts the buffer itself (HOST-IDLE-1): listing the
 * whole buffer at every step made a case of many held sends quadratic (40,000 took 65 s).
 */
declare class SessionDelivery extends PeerDelivery {
}
import { IdleSubscriptions } from "./idle-subscriptions.mjs";
import { PeerDelivery } from "./peer-delivery.mjs";
export {};
