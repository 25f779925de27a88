// @ts-check
// The host (spec/host.md), a dependency-free port for Node.js 20: several sessions on one clock,
// each composed of this port's own machines, the wake gate (wake-gate.mjs), peer delivery as a
// recipient (peer-delivery.mjs) and both halves of idle subscriptions (idle-subscriptions.mjs).
// Everything here is wiring: every rule a composed machine decides is that machine's.
// Requirement IDs in comments point into spec/host.md.
//
// The event names, arguments, defaults, config keys, options and vocabularies come from the
// interface data (interface/host.interface.json, a copy of spec/host.interface.json).

import {
  conforms, configKeys, eventOf, loadInterface, optionNames, unknownArguments, vocabulary, withConfigDefaults, withDefaults,
} from "./interface-data.mjs";
import { InboxWakePolicy, SCHEDULED_PREFIX, WakeGateError, policyFromConfig } from "./wake-gate.mjs";
import {
  PeerDelivery, PeerDeliveryError, renderCrossSessionDeliveryNotice, renderCrossSessionDroppedNotice,
} from "./peer-delivery.mjs";
import { IdleError, IdleSubscriptions } from "./idle-subscriptions.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

const INTERFACE = loadInterface("host");
export const NAME = "host";
const OPTION_NAMES = optionNames(INTERFACE);
/** The host's finding options (HOST-OPT-1..4), each a feature tag. */
export const FEATURES = OPTION_NAMES.map((name) => `option:${name}`);
const CONFIG_KEYS = configKeys(INTERFACE);
/**
 * A word of a list vocabulary, checked there when the module loads.
 * @param {string} name @param {string} word
 */
function wordOf(name, word) {
  if (!vocabulary(INTERFACE, name).includes(word)) throw new Error(`host: the ${name} vocabulary has no ${word}`);
  return word;
}
/** The receipts of the idle watcher (HOST-WAKE-2, HOST-WAKE-3). */
const WAKE_ATTEMPTED = wordOf("host_receipts", "wake_attempted");
const WAKE_REFUSED = wordOf("host_receipts", "wake_refused");
const TURN_STARTED = wordOf("host_receipts", "turn_started");
/** The kind of delivered peer mail and of reminders (HOST-SEND-3, HOST-TURN-3). */
const AGENT_KIND = wordOf("peer_kind", "agent");
/** The events that are turn actions (HOST-TERM-5); `end_turn` needs a turn but is not counted. */
const TURN_ACTIONS = ["send_message", "schedule", "subscribe"];

/**
 * @typedef {"invalid_config" | "invalid_argument" | "unknown_session" | "invalid_target" | "invalid_claim"
 *   | "invalid_text" | "invalid_delay" | "invalid_time" | "invalid_ticket" | "invalid_setting" | "not_in_turn"
 *   | "turn_limit" | "reminder_limit" | "not_held" | "box_full"} HostErrorCode
 */

/** @extends {CodedError<HostErrorCode>} */
export class HostError extends CodedError {}

/** @param {HostErrorCode} code @param {string} message @returns {never} */
const fail = (code, message) => { throw new HostError(code, message); };

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
class ReminderBook {
  constructor() {
    /** @type {{ due: number, number: number, reminder: Reminder }[]} a heap: each entry before its two children */
    this.heap = [];
    this.scheduled = 0;
    /** @type {Map<string, number>} */
    this.counts = new Map();
  }

  /** @param {string} session how many of its reminders are waiting, due or not */
  waiting(session) {
    return this.counts.get(session) ?? 0;
  }

  /** @param {Reminder} reminder */
  schedule(reminder) {
    const heap = this.heap;
    const entry = { due: reminder.due, number: this.scheduled++, reminder };
    let at = heap.push(entry) - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(entry, heap[parent])) break;
      heap[at] = heap[parent];
      at = parent;
    }
    heap[at] = entry;
    this.counts.set(reminder.session, this.waiting(reminder.session) + 1);
  }

  /** @param {number} now the reminders due at `now`, taken out, in scheduling order */
  fallDue(now) {
    const heap = this.heap;
    /** @type {{ due: number, number: number, reminder: Reminder }[]} */
    const due = [];
    while (heap.length > 0 && heap[0].due <= now) {
      due.push(heap[0]);
      const last = /** @type {{ due: number, number: number, reminder: Reminder }} */ (heap.pop());
      if (heap.length === 0) break;
      let at = 0;
      for (;;) {
        const left = 2 * at + 1;
        if (left >= heap.length) break;
        const child = left + 1 < heap.length && before(heap[left + 1], heap[left]) ? left + 1 : left;
        if (!before(heap[child], last)) break;
        heap[at] = heap[child];
        at = child;
      }
      heap[at] = last;
    }
    due.sort((a, b) => a.number - b.number);
    for (const entry of due) this.counts.set(entry.reminder.session, this.waiting(entry.reminder.session) - 1);
    return due.map((entry) => entry.reminder);
  }
}

/**
 * @param {{ due: number, number: number }} a @param {{ due: number, number: number }} b
 * whether `a` leaves the heap before `b`: due first, then scheduled first
 */
function before(a, b) {
  return a.due < b.due || (a.due === b.due && a.number < b.number);
}
/**
 * A record of `events` (HOST-IF-3).
 * @typedef {Record<string, unknown> & { type: string }} HostRecord
 */
/**
 * HOST-IF-2: one session's state in every output.
 * @typedef {{ phase: "idle" | "turn", pending: number, shown: number, held: number, streak: number }} SessionState
 */
/** What one idle-subscriptions event hands back (IDLE-OUT-1). @typedef {import("./idle-subscriptions.mjs").Effects} IdleEffects */
/** @returns {IdleEffects} */
const idleEffects = () => ({ notices: [], sent: [], swept: [] });

/**
 * A session's peer delivery, whose step results list no held buffer. The host reads a result's
 * receipts, ticket and send error alone, and counts the buffer itself (HOST-IDLE-1): listing the
 * whole buffer at every step made a case of many held sends quadratic (40,000 took 65 s).
 */
class SessionDelivery extends PeerDelivery {
  /** @override @returns {HeldOutput[]} */
  heldOutput() {
    return [];
  }
}

/** HOST-TERM-1: one configured address and its machines. */
class Session {
  /**
   * @param {string} address
   * @param {{ wake_gate: unknown, peer_delivery: unknown, idle_subscriptions: unknown }} parts
   * @param {() => number} clock the host's one clock (HOST-TIME-1)
   */
  constructor(address, parts, clock) {
    this.address = address;
    /** @type {InboxWakePolicy} */
    this.gate = policyFromConfig(parts.wake_gate, clock);
    this.delivery = new SessionDelivery(parts.peer_delivery);
    this.idle = new IdleSubscriptions(parts.idle_subscriptions);
    /** @type {Pending[]} HOST-TERM-2, in arrival order */
    this.pending = [];
    /** @type {string[]} harness lines waiting for the next turn (HOST-OPT-3) */
    this.shown = [];
    /** @type {"idle" | "turn"} */
    this.phase = "idle";
    /** The current turn's actions (HOST-TURN-1). */
    this.actions = 0;
    /** What the idle half last got from `set_held` (HOST-IDLE-1); it starts with nothing held. */
    this.heldTold = 0;
    /** @type {Map<number, InFlight>} the messages this session's peer delivery has not yet settled, by ticket */
    this.inFlight = new Map();
  }

  /** @returns {SessionState} */
  state() {
    return {
      phase: this.phase, pending: this.pending.length, shown: this.shown.length,
      held: this.delivery.held.length, streak: this.gate.streak,
    };
  }
}

/**
 * HOST-IF-1: the config over its defaults, each key of its type; throws `invalid_config`.
 * @param {Record<string, unknown>} config
 */
function readConfig(config) {
  for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) fail("invalid_config", `unknown config key ${key}`);
  const merged = withConfigDefaults(INTERFACE, config);
  for (const key of INTERFACE.config.keys) {
    const value = merged[key.name];
    const ok = value === null ? key.nullable === true : conforms(INTERFACE, key.type, value);
    if (!ok) fail("invalid_config", `bad ${key.name}`);
  }
  const options = /** @type {Record<string, boolean>} */ (merged.options);
  /** @type {Record<string, boolean>} */
  const on = Object.fromEntries(OPTION_NAMES.map((name) => [name, options[name] === true]));
  if (on.harness_lines_as_agent_mail && on.harness_lines_at_next_turn) {
    fail("invalid_config", "harness_lines_as_agent_mail and harness_lines_at_next_turn are two readings of HOST-LINE-1");
  }
  return {
    sessions: /** @type {string[]} */ (merged.sessions),
    parts: {
      wake_gate: merged.wake_gate, peer_delivery: merged.peer_delivery, idle_subscriptions: merged.idle_subscriptions,
    },
    turnActionLimit: /** @type {number | null} */ (merged.turn_action_limit),
    reminderLimit: /** @type {number | null} */ (merged.reminder_limit),
    options: on,
  };
}

export class Host {
  /**
   * HOST-IF-1: a composed machine's config error is the host's `invalid_config`.
   * @param {Record<string, unknown>} config
   */
  constructor(config) {
    const read = readConfig(config);
    this.options = read.options;
    this.turnActionLimit = read.turnActionLimit;
    this.reminderLimit = read.reminderLimit;
    this.clock = 0;
    this.nextSubscription = 1;
    /** @type {Map<number, string>} each subscription id's target, for its notices' `about` (HOST-IDLE-2) */
    this.subscriptionTargets = new Map();
    this.reminders = new ReminderBook();
    // One clock drives every machine (HOST-TIME-1) and it starts at 0 ms (HOST-IF-1): an idle
    // half whose own clock would start elsewhere is a part config the host rejects.
    const idle = /** @type {Record<string, unknown>} */ (read.parts.idle_subscriptions);
    if (Object.hasOwn(idle, "start_ms") && idle.start_ms !== 0) fail("invalid_config", "idle_subscriptions.start_ms is not the host clock's start");
    try {
      /** @type {Session[]} in config order */
      this.sessions = read.sessions.map((address) => new Session(address, read.parts, () => this.clock));
    } catch (error) {
      if (error instanceof WakeGateError || error instanceof PeerDeliveryError || error instanceof IdleError) {
        fail("invalid_config", `a part config its machine rejects: ${error.message}`);
      }
      throw error;
    }
  }

  /** @param {string} address @returns {Session} */
  session(address) {
    const found = this.sessions.find((s) => s.address === address);
    if (!found) throw new Error(`host: no session ${address}`);
    return found;
  }

  /** @returns {Record<string, SessionState>} HOST-IF-2 */
  state() {
    return Object.fromEntries(this.sessions.map((s) => [s.address, s.state()]));
  }

  // -- harness lines, receipts, answers ---------------------------------------------------

  /**
   * HOST-LINE-1, HOST-OPT-2, HOST-OPT-3: a harness line to `to`, about `about`.
   * @param {string} to @param {string} about @param {string} text @param {HostRecord[]} records
   */
  line(to, about, text, records) {
    /** @type {LineDelivery} */
    const delivery = this.options.harness_lines_as_agent_mail ? "agent"
      : this.options.harness_lines_at_next_turn ? "next_turn" : "user";
    records.push({ type: "line", to, about, delivery, text });
    const session = this.session(to);
    if (delivery === "next_turn") session.shown.push(text);
    else session.pending.push({ message: { kind: delivery, from: about, to, text }, peer: false });
  }

  /**
   * HOST-RCPT-1, HOST-SEND-3: each receipt of a recipient's peer delivery, recorded and told to
   * its true origin; a delivered message joins the recipient's pending mail.
   * @param {Session} recipient @param {import("./peer-delivery.mjs").Receipt[]} receipts
   * @param {HostRecord[]} records
   */
  receipts(recipient, receipts, records) {
    for (const r of receipts) {
      const flight = recipient.inFlight.get(r.ticket);
      if (!flight) throw new Error(`host: a receipt for ticket ${r.ticket}, which the host never sent`);
      records.push({
        type: "receipt", recipient: recipient.address, ticket: r.ticket, sender: flight.origin,
        state: r.state, cause: r.cause, reason: r.reason,
      });
      if (r.state !== "held") recipient.inFlight.delete(r.ticket);
      if (r.state === "delivered") {
        recipient.pending.push({
          message: { kind: AGENT_KIND, from: r.sender, to: recipient.address, text: flight.text }, peer: true,
        });
      }
      const text = r.state === "dropped"
        ? renderCrossSessionDroppedNotice(1, [recipient.address],
          [r.reason ?? undefined])
        : renderCrossSessionDeliveryNotice(r.state, 1, [recipient.address]);
      this.line(flight.origin, recipient.address, text, records);
    }
  }

  /**
   * HOST-IDLE-2: the notices a requester half hands its model, as harness lines about the target.
   * @param {Session} requester @param {IdleEffects["notices"]} notices @param {HostRecord[]} records
   */
  notices(requester, notices, records) {
    for (const notice of notices) {
      const about = this.subscriptionTargets.get(notice.subscription);
      if (about === undefined) throw new Error(`host: a notice for subscription ${notice.subscription}, never sent`);
      this.line(requester.address, about, notice.text, records);
    }
  }

  /**
   * HOST-IDLE-2: each answer a target half sends, recorded and carried at once to the requester.
   * @param {Session} target @param {IdleEffects["sent"]} sent @param {HostRecord[]} records
   */
  answers(target, sent, records) {
    for (const answer of sent) {
      records.push({ type: "answer", from: target.address, to: answer.to, subscription: answer.subscription, kind: answer.kind });
      const requester = this.session(answer.to);
      const fx = idleEffects();
      requester.idle.receiveNotice({
        subscription: answer.subscription, from: target.address,
        notice: { kind: answer.kind, finished_at: answer.finished_at, detail: answer.detail },
      }, fx);
      this.notices(requester, fx.notices, records);
    }
  }

  /** HOST-IDLE-1: after every step, each idle half learns a changed held count, in config order. */
  syncHeld() {
    for (const s of this.sessions) {
      const n = s.delivery.held.length + (this.options.pending_counts_as_held ? s.pending.length : 0);
      if (n !== s.heldTold) {
        s.idle.setHeld({ count: n });
        s.heldTold = n;
      }
    }
  }

  /**
   * HOST-TURN-1 (and HOST-TURN-3's `reminder_limit`): the state checks of a turn action.
   * @param {Session} s @param {string} event
   */
  checkTurn(s, event) {
    if (s.phase !== "turn") fail("not_in_turn", `${s.address} is not in a turn`);
    if (!TURN_ACTIONS.includes(event)) return;
    if (this.turnActionLimit !== null && s.actions >= this.turnActionLimit) fail("turn_limit", "turn_action_limit reached");
    if (event === "schedule" && this.reminderLimit !== null &&
        this.reminders.waiting(s.address) >= this.reminderLimit) {
      fail("reminder_limit", "reminder_limit reminders are not yet due");
    }
  }

  /**
   * HOST-TURN-3: a due time is a clock reading, so it is a safe integer; checked after
   * `reminder_limit`. Both terms are safe integers, so the subtraction is exact in doubles.
   * @param {number} delayMs
   */
  checkDue(delayMs) {
    if (delayMs > Number.MAX_SAFE_INTEGER - this.clock) fail("invalid_delay", "the reminder would fall due past 2^53 - 1");
  }

  // -- the events ---------------------------------------------------------------------------

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-WAKE-4 */
  user_input(a, records) {
    void records;
    const s = this.session(a.session);
    s.pending.push({ message: { kind: "user", from: s.address, to: s.address, text: a.text }, peer: false });
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-WAKE-1..3 */
  tick(a, records) {
    void a;
    for (const s of this.sessions) {
      if (s.phase !== "idle" || s.pending.length === 0) continue;
      const batch = s.pending.map((p) => p.message);
      const decision = s.gate.wakeDecisionFor(batch, { pluginPending: false });
      if (decision.wake) {
        const taken = s.pending.length + s.shown.length;
        const peer = s.pending.filter((p) => p.peer).length;
        s.pending = [];
        s.shown = [];
        if (peer > 0) s.delivery.take({ count: peer }); // PEER-HOLD-6
        if (batch.some((m) => m.kind === "user")) s.gate.resetStreak(); // WAKE-LANE-1
        s.idle.turnStarted();
        s.phase = "turn";
        s.actions = 0;
        records.push({
          type: "wake", session: s.address, lane: decision.lane, counts_against_cap: decision.countsAgainstCap,
          taken, receipts: [WAKE_ATTEMPTED, TURN_STARTED],
        });
      } else {
        const announced = s.gate.announceRefusal(); // WAKE-CAP-3: the mail stays pending
        records.push({
          type: "refusal", session: s.address, lane: decision.lane, refusal_code: decision.refusalCode, announced,
          line: announced ? decision.refusalReason : null, receipts: announced ? [WAKE_ATTEMPTED, WAKE_REFUSED] : [],
        });
      }
    }
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TIME-1 */
  advance(a, records) {
    const now = /** @type {number} */ (a.now_ms);
    if (now < this.clock) fail("invalid_time", "the clock does not move back");
    this.clock = now;
    for (const s of this.sessions) this.receipts(s, s.delivery.advance({ now_ms: now }).receipts, records);
    for (const s of this.sessions) {
      const fx = idleEffects();
      s.idle.advance({ now_ms: now }, fx);
      this.notices(s, fx.notices, records);
      this.answers(s, fx.sent, records);
    }
    for (const r of this.reminders.fallDue(now)) {
      this.session(r.session).pending.push({
        message: { kind: AGENT_KIND, from: r.session, to: r.session, text: SCHEDULED_PREFIX + r.text }, peer: false,
      });
    }
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-SEND-1..4 */
  send_message(a, records) {
    const s = this.session(a.session);
    this.checkTurn(s, "send_message");
    const recipient = this.session(a.to);
    const sender = this.options.stamp_true_sender || a.claimed_from === null ? s.address : a.claimed_from; // HOST-SEND-2
    const out = recipient.delivery.send_message({
      sender, sender_mode: null, attestation: "absent", hops: 0, loop: false, duplicate: false, rate_limited: false,
    });
    s.actions += 1;
    const { ticket, send_error: sendError } = /** @type {{ ticket: number, send_error: string | null }} */ (
      /** @type {unknown} */ (out));
    records.push({ type: "send", session: s.address, to: recipient.address, claimed_from: a.claimed_from, ticket, send_error: sendError });
    if (sendError !== null) return; // HOST-SEND-4: nothing queued, no receipt
    recipient.inFlight.set(ticket, { origin: s.address, text: a.text });
    this.receipts(recipient, out.receipts, records);
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-3 */
  schedule(a, records) {
    const s = this.session(a.session);
    this.checkTurn(s, "schedule");
    this.checkDue(/** @type {number} */ (a.delay_ms));
    s.actions += 1;
    const due = this.clock + /** @type {number} */ (a.delay_ms);
    this.reminders.schedule({ session: s.address, due, text: a.text });
    records.push({ type: "reminder", session: s.address, due_ms: due });
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-4 */
  subscribe(a, records) {
    const s = this.session(a.session);
    this.checkTurn(s, "subscribe");
    const target = this.session(a.target);
    s.actions += 1;
    const id = this.nextSubscription++;
    this.subscriptionTargets.set(id, target.address);
    const fx = idleEffects();
    const out = /** @type {{ verdict: string, pushed_out: number | null }} */ (
      s.idle.subscribe({ target: target.address, subscription: id, label: null }, fx));
    records.push({ type: "subscribe", session: s.address, target: target.address, subscription: id, verdict: out.verdict, pushed_out: out.pushed_out });
    this.notices(s, fx.notices, records);
    if (out.verdict !== "sent") return;
    const carried = idleEffects();
    target.idle.addSubscriber({ requester: s.address, subscription: id, parity: false }, carried);
    this.answers(target, carried.sent, records);
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-TURN-2 */
  end_turn(a, records) {
    void records;
    const s = this.session(a.session);
    this.checkTurn(s, "end_turn");
    s.idle.turnFinished({ last_turn_text: a.detail });
    s.phase = "idle";
  }

  /**
   * HOST-ENV-1: the recipient user acts on its own buffer; peer delivery's errors are the host's.
   * @param {"approve" | "deny"} which @param {Record<string, any>} a @param {HostRecord[]} records
   */
  release(which, a, records) {
    const s = this.session(a.session);
    let out;
    try {
      out = s.delivery[which]({ ticket: a.ticket });
    } catch (error) {
      // invalid_ticket and not_held (PEER-HOLD-4), and box_full under its release_respects_box_cap
      if (error instanceof PeerDeliveryError) fail(/** @type {HostErrorCode} */ (error.code), error.message);
      throw error;
    }
    this.receipts(s, out.receipts, records);
  }

  /** @param {Record<string, any>} a @param {HostRecord[]} records */
  approve(a, records) { this.release("approve", a, records); }

  /** @param {Record<string, any>} a @param {HostRecord[]} records */
  deny(a, records) { this.release("deny", a, records); }

  /** @param {Record<string, any>} a @param {HostRecord[]} records HOST-ENV-2 */
  set_setting(a, records) {
    const s = this.session(a.session);
    s.delivery.set_recipient({ setting: /** @type {Setting} */ (a.setting) });
    this.receipts(s, s.delivery.drain().receipts, records);
  }

  /**
   * HOST-IF-5's argument checks, in the event's argument order, each with its own code: the
   * interface type first, then what the type's label says of an address.
   * @param {import("./interface-data.mjs").InterfaceEvent} defined @param {Record<string, unknown>} args
   */
  checkArguments(defined, args) {
    const extra = unknownArguments(defined, args);
    if (extra.length) fail(/** @type {HostErrorCode} */ (INTERFACE.extra_argument_error ?? "invalid_argument"), `unknown argument(s) ${extra}`);
    const addresses = this.sessions.map((s) => s.address);
    for (const argument of defined.arguments) {
      const code = /** @type {HostErrorCode} */ (argument.code ?? "invalid_argument");
      if (!Object.hasOwn(args, argument.name)) {
        if (argument.required) fail(code, `${argument.name} is required`);
        continue;
      }
      const value = args[argument.name];
      if (value === null) {
        if (!argument.nullable) fail(code, `${argument.name} is not nullable`);
        continue;
      }
      if (!conforms(INTERFACE, argument.type, value)) fail(code, `bad ${argument.name}`);
      if (argument.type === "address" || argument.type === "other_address") {
        if (!addresses.includes(/** @type {string} */ (value))) fail(code, `${argument.name} names no session`);
        // HOST-SEND-1, HOST-TURN-4: a `to` or `target` is another session.
        if (argument.type === "other_address" && value === args.session) {
          fail(code, `${argument.name} is the session itself`);
        }
      }
    }
  }

  /**
   * One step: {events, sessions}, or {error, sessions} with nothing changed (HOST-IF-4).
   * @param {Step} step
   * @returns {Record<string, unknown>}
   */
  apply({ event, args = {} }) {
    const defined = eventOf(INTERFACE, event);
    if (!defined) throw new Error(`unknown host event ${event}`);
    /** @type {HostRecord[]} */
    const records = [];
    try {
      this.checkArguments(defined, args);
      const given = withDefaults(defined, args);
      HANDLERS[/** @type {HostEvent} */ (event)](this, given, records);
    } catch (error) {
      if (error instanceof HostError) return { error: error.code, sessions: this.state() };
      throw error;
    }
    this.syncHeld();
    return { events: records, sessions: this.state() };
  }
}

/** @typedef {"user_input" | "tick" | "advance" | "send_message" | "schedule" | "subscribe" | "end_turn" | "approve" | "deny" | "set_setting"} HostEvent */
/** @type {Record<HostEvent, (host: Host, args: Record<string, unknown>, records: HostRecord[]) => void>} */
const HANDLERS = {
  user_input: (h, a, r) => h.user_input(a, r),
  tick: (h, a, r) => h.tick(a, r),
  advance: (h, a, r) => h.advance(a, r),
  send_message: (h, a, r) => h.send_message(a, r),
  schedule: (h, a, r) => h.schedule(a, r),
  subscribe: (h, a, r) => h.subscribe(a, r),
  end_turn: (h, a, r) => h.end_turn(a, r),
  approve: (h, a, r) => h.approve(a, r),
  deny: (h, a, r) => h.deny(a, r),
  set_setting: (h, a, r) => h.set_setting(a, r),
};
for (const event of INTERFACE.events) {
  if (!Object.hasOwn(HANDLERS, event.name)) throw new Error(`host: the interface data's event ${event.name} has no handler`);
}

/**
 * The port's side of one case: config and steps in, {outputs} or {config_error} out.
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  return runSteps(HostError, () => new Host(config), (host, step) => host.apply(step), steps);
}
