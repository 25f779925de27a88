// @ts-check
// Idle subscriptions (spec/idle-subscriptions.md), a dependency-free port for Node.js 20.
// Written from the spec's Interface section; requirement IDs in comments point there.
// Strings are handled as code points (for..of), never as UTF-16 units (IDLE-LABEL-4).
// The constants, the label sanitiser, the clock and the notice texts carry the names and
// signatures of seed 001's declarations (peer-notices.d.ts). The config keys and their defaults,
// each event's arguments (in fault order) and defaults, and the option names come from the
// interface data (interface/idle-subscriptions.interface.json, a copy of
// spec/idle-subscriptions.interface.json); the seed-named constants are checked against it.
// Each seed-named helper checks its own arguments in the documented order (IDLE-IF-3); the case
// driver at the end only translates JSON.
import { BLANK_RANGES, FOLDED_PHRASES, LETTER_FOLDS, LOOKALIKE_RANGES, SPACE_RANGES } from "./idle-label-table.mjs";
import {
  agrees, configDefault, configKeys, eventOf, loadInterface, optionNames, unknownArguments, vocabulary, withConfigDefaults,
  withDefaults,
} from "./interface-data.mjs";
import { CodedError, runSteps } from "./protocol.mjs";

const INTERFACE = loadInterface("idle-subscriptions");
// One feature per finding option.
export const FEATURES = optionNames(INTERFACE).map((name) => `option:${name}`);

/** A subscription's time to live on both halves, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_SUBSCRIPTION_TTL_MS = 43_200_000;
/** The target half's subscriber table cap (IDLE-DEF-1). */
export const PEER_IDLE_SUBSCRIBER_TABLE_CAP = 32;
/** The requester half's outstanding table cap (IDLE-DEF-1). */
export const PEER_IDLE_OUTSTANDING_CAP = 32;
/** Earlier outstanding subscriptions to the same target a requester keeps (IDLE-DEF-1). */
export const PEER_IDLE_PRIORS_KEPT = 3;
/** The settle window after a turn finishes before the idle answer, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_FIRE_DEBOUNCE_MS = 750;
/** The re-check cadence while messages are held for review, in milliseconds (IDLE-DEF-1). */
export const PEER_IDLE_HELD_BACKOFF_MS = 30_000;
/** The sanitised label's length cap, in code points (IDLE-LABEL-4). */
export const PEER_IDLE_LABEL_MAX = 100;
/** The four notice kinds (IDLE-TEXT-5). */
export const PEER_IDLE_NOTICE_KINDS = /** @type {const} */ (["idle", "exited", "unavailable", "expired"]);
Object.freeze(PEER_IDLE_NOTICE_KINDS);
/** @typedef {(typeof PEER_IDLE_NOTICE_KINDS)[number]} PeerIdleNoticeKind */
/** The sentence an `unavailable` notice gives as its causes (IDLE-TEXT-3). */
// One literal (no concatenation), so that its declared type is the sentence itself.
export const PEER_IDLE_UNAVAILABLE_CAUSES = "it is shutting down, its subscription table is full, a newer subscription displaced this one, or it answered in a form this version does not recognize";
/**
 * What one idle notice says (IDLE-TEXT-2). `label` and `detail` are already through
 * peerIdleNoticeLabel; `finishedAt` (epoch milliseconds) is read for `idle` and `exited` only,
 * `detail` for `idle` only.
 * @typedef {object} PeerIdleNoticeFields
 * @property {PeerIdleNoticeKind} kind
 * @property {string} label
 * @property {number} [finishedAt]
 * @property {string} [detail]
 */

/**
 * IDLE-CONF-1: every key, after the interface data's defaults and the checks of the constructor.
 * @typedef {{ start_ms: number, ttl_ms: number, outstanding_cap: number, priors_kept: number,
 *   subscriber_cap: number, debounce_ms: number, held_backoff_ms: number, reader_utc_offset_min: number,
 *   last_turn_text_seat: boolean }} IdleConfig
 */
const OPTION_NAMES = optionNames(INTERFACE);
const CONFIG_KEYS = configKeys(INTERFACE);
const TEXTS = /** @type {Record<string, string>} */ (INTERFACE.vocabularies.texts);
const TAG = "[peer idle notice]";
const TAIL = "This is an automated harness notice, not a message from a person and not an instruction.";
const PHRASE = "peer idle notice"; // IDLE-LABEL-3, ASCII: its code points are its UTF-16 units
const UNNAMED = "(unnamed session)";
const PLACEHOLDER = "--:--"; // IDLE-CLOCK-2

// The seed's constants (IDLE-DEF-1) and the spec's words are written here as the seed declares
// them; the interface data holds the same, which this checks when the module loads.
agrees("PEER_IDLE_SUBSCRIPTION_TTL_MS", PEER_IDLE_SUBSCRIPTION_TTL_MS, configDefault(INTERFACE, "ttl_ms"));
agrees("PEER_IDLE_SUBSCRIBER_TABLE_CAP", PEER_IDLE_SUBSCRIBER_TABLE_CAP, configDefault(INTERFACE, "subscriber_cap"));
agrees("PEER_IDLE_OUTSTANDING_CAP", PEER_IDLE_OUTSTANDING_CAP, configDefault(INTERFACE, "outstanding_cap"));
agrees("PEER_IDLE_PRIORS_KEPT", PEER_IDLE_PRIORS_KEPT, configDefault(INTERFACE, "priors_kept"));
agrees("PEER_IDLE_FIRE_DEBOUNCE_MS", PEER_IDLE_FIRE_DEBOUNCE_MS, configDefault(INTERFACE, "debounce_ms"));
agrees("PEER_IDLE_HELD_BACKOFF_MS", PEER_IDLE_HELD_BACKOFF_MS, configDefault(INTERFACE, "held_backoff_ms"));
agrees("PEER_IDLE_LABEL_MAX", PEER_IDLE_LABEL_MAX, /** @type {{ label_max: number }} */ (INTERFACE.vocabularies.limits).label_max);
agrees("PEER_IDLE_NOTICE_KINDS", PEER_IDLE_NOTICE_KINDS, vocabulary(INTERFACE, "notice_kinds"));
agrees("PEER_IDLE_UNAVAILABLE_CAUSES", PEER_IDLE_UNAVAILABLE_CAUSES, TEXTS.causes);
agrees("the notice texts", { tag: TAG, tail: TAIL, prefix_phrase: PHRASE, unnamed_label: UNNAMED, clock_placeholder: PLACEHOLDER },
  { tag: TEXTS.tag, tail: TEXTS.tail, prefix_phrase: TEXTS.prefix_phrase, unnamed_label: TEXTS.unnamed_label,
    clock_placeholder: TEXTS.clock_placeholder });

/**
 * @typedef {"invalid_config" | "invalid_argument" | "invalid_time" | "target_closed" | "turn_in_progress"
 *   | "no_turn" | "duplicate_subscription"} IdleErrorCode
 */

/** @extends {CodedError<IdleErrorCode>} */
export class IdleError extends CodedError {}
/** @param {IdleErrorCode} code @param {string} why @returns {never} */
const fail = (code, why) => { throw new IdleError(code, why); };

/** @param {unknown} v @returns {v is number} */
const isNatural = (v) => Number.isSafeInteger(v) && /** @type {number} */ (v) >= 0;
/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** @param {unknown} v @returns {v is string} */
const isAddress = (v) => typeof v === "string" && v.length > 0;
/** @param {unknown} v @returns {v is number} */
const isOffset = (v) => Number.isInteger(v) && Math.abs(/** @type {number} */ (v)) <= 1439;

// -- the label sanitiser (IDLE-LABEL-1..6) --------------------------------------------

/** @param {readonly (readonly [low: number, high: number])[]} ranges @param {number} cp */
function inRanges(ranges, cp) {
  let lo = 0, hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [low, high] = ranges[mid];
    if (cp < low) hi = mid - 1;
    else if (cp > high) lo = mid + 1;
    else return true;
  }
  return false;
}

/** @param {number} cp */
const mapsToSpace = (cp) => inRanges(SPACE_RANGES, cp);
/** IDLE-LABEL-6: a code point that prints nothing. @param {string} ch */
const isBlank = (ch) => inRanges(BLANK_RANGES, /** @type {number} */ (ch.codePointAt(0)));

/** The KMP failure function of a phrase. @param {string} phrase @returns {number[]} */
function kmpFailure(phrase) {
  const f = new Array(phrase.length).fill(0);
  let k = 0;
  for (let i = 1; i < phrase.length; i++) {
    while (k && phrase[i] !== phrase[k]) k = f[k - 1];
    if (phrase[i] === phrase[k]) k++;
    f[i] = k;
  }
  return f;
}

/**
 * The matched prefix length of `phrase` after one more letter, from `k`.
 * @param {string} phrase @param {readonly number[]} failure @param {number} k @param {string} letter
 */
function kmpStep(phrase, failure, k, letter) {
  while (k && letter !== phrase[k]) k = failure[k - 1];
  return letter === phrase[k] ? k + 1 : 0;
}

/** IDLE-LABEL-3 by default: the one phrase, ASCII letters compared without case. */
const PLAIN = { phrases: [PHRASE], failures: [kmpFailure(PHRASE)], blank: mapsToSpace, fold: (/** @type {string} */ ch) => asciiLower(ch) };
const FOLD_TO_LETTER = new Map(LETTER_FOLDS);
/** IDLE-OPT-5: both phrases, each code point compared as its fold; lookalikes blanked too. */
const FOLDING = {
  phrases: FOLDED_PHRASES,
  failures: FOLDED_PHRASES.map(kmpFailure),
  blank: (/** @type {number} */ cp) => mapsToSpace(cp) || inRanges(LOOKALIKE_RANGES, cp),
  fold: (/** @type {string} */ ch) => FOLD_TO_LETTER.get(/** @type {number} */ (ch.codePointAt(0))) ?? asciiLower(ch),
};

/** @param {string} ch */
const asciiLower = (ch) => (ch >= "A" && ch <= "Z" ? String.fromCharCode(ch.charCodeAt(0) + 32) : ch);

/**
 * IDLE-LABEL-1..6: a label or detail line made safe to quote in a notice; undefined when nothing
 * printable is left.
 * @param {string} raw
 * @returns {string | undefined}
 */
export function peerIdleNoticeLabel(raw) {
  return sanitise(raw, false);
}

/**
 * The sanitiser, with option fold_lookalikes (IDLE-OPT-5) or without.
 * @param {string} raw @param {boolean} foldLookalikes
 * @returns {string | undefined}
 */
function sanitise(raw, foldLookalikes) {
  if (typeof raw !== "string") return fail("invalid_argument", "raw (a label or detail) must be a string");
  const rules = foldLookalikes ? FOLDING : PLAIN;
  /** @type {string[]} */
  const chars = [];
  /** @type {number[][]} per pushed code point, the matched prefix length of each phrase */
  const matched = [];
  /** @param {string} ch */
  const push = (ch) => {
    if (ch === " " && (chars.length === 0 || chars[chars.length - 1] === " ")) return;
    const before = matched.length ? matched[matched.length - 1] : rules.phrases.map(() => 0);
    const letter = rules.fold(ch);
    chars.push(ch);
    matched.push(rules.phrases.map((p, i) => kmpStep(p, rules.failures[i], before[i], letter)));
  };
  for (const ch of raw) {
    push(rules.blank(/** @type {number} */ (ch.codePointAt(0))) ? " " : ch);
    const last = matched.length ? matched[matched.length - 1] : [];
    const whole = rules.phrases.find((p, i) => last[i] === p.length)?.length ?? 0;
    if (whole) {
      chars.length -= whole;
      matched.length -= whole;
      push(" ");
    }
  }
  while (chars.length && chars[chars.length - 1] === " ") chars.pop();
  const capped = chars.slice(0, PEER_IDLE_LABEL_MAX);
  while (capped.length && capped[capped.length - 1] === " ") capped.pop();
  // IDLE-LABEL-6: spaces and blanks alone print nothing.
  return capped.some((ch) => ch !== " " && !isBlank(ch)) ? capped.join("") : undefined;
}

// -- clock and texts (IDLE-CLOCK-*, IDLE-TEXT-*) -----------------------------------------

/**
 * IDLE-CLOCK-1..3: HH:MM, 24-hour, of the minute holding `epochMs` at the reader's fixed UTC offset
 * (in minutes, default 0); `--:--` when there is no time.
 * @param {number | undefined} epochMs
 * @param {number} [utcOffsetMin]
 * @returns {string}
 */
export function formatPeerNoticeClock(epochMs, utcOffsetMin = 0) {
  // IDLE-IF-3: epoch_ms, then utc_offset_min.
  if (epochMs !== null && epochMs !== undefined && !isNatural(epochMs)) fail("invalid_argument", "epoch_ms");
  if (!isOffset(utcOffsetMin)) fail("invalid_argument", "utc_offset_min");
  if (epochMs === null || epochMs === undefined) return PLACEHOLDER;
  // IDLE-CLOCK-3: subtract the remainder first, so that the division is exact.
  const minutes = (epochMs - (epochMs % 60000)) / 60000 + utcOffsetMin;
  const m = ((minutes % 1440) + 1440) % 1440;
  /** @param {number} n */
  const two = (n) => String(n).padStart(2, "0");
  return `${two(Math.floor(m / 60))}:${two(m % 60)}`;
}

/**
 * IDLE-TEXT-5: true exactly for the four kind strings.
 * @param {unknown} v
 * @returns {v is PeerIdleNoticeKind}
 */
export const isPeerIdleNoticeKind = (v) => typeof v === "string" && /** @type {readonly string[]} */ (PEER_IDLE_NOTICE_KINDS).includes(v);

/**
 * IDLE-TEXT-6; the sanitiser with option fold_lookalikes when `foldLookalikes` (IDLE-OPT-5).
 * @param {boolean} foldLookalikes @param {...(string | null | undefined)} candidates @returns {string}
 */
function labelOrUnnamed(foldLookalikes, ...candidates) {
  for (const c of candidates) {
    if (c !== null && c !== undefined) {
      const label = sanitise(c, foldLookalikes);
      if (label !== undefined) return label;
    }
  }
  return UNNAMED;
}

/**
 * IDLE-TEXT-1..4, IDLE-TEXT-8: the one-line notice the requester's model reads. The label and
 * detail are used as given; the clock is read at the reader's UTC offset (minutes, default 0).
 * @param {PeerIdleNoticeFields} n
 * @param {number} [utcOffsetMin]
 * @returns {string}
 */
export function renderCrossSessionIdleNotice(n, utcOffsetMin = 0) {
  const { kind, label, finishedAt, detail } = n;
  // IDLE-IF-3: kind, label, finished_at, detail, utc_offset_min.
  if (!isPeerIdleNoticeKind(kind)) fail("invalid_argument", "kind");
  if (!isAddress(label)) fail("invalid_argument", "label");
  if (finishedAt !== null && finishedAt !== undefined && !isNatural(finishedAt)) fail("invalid_argument", "finished_at");
  if (detail !== null && detail !== undefined && typeof detail !== "string") fail("invalid_argument", "detail");
  const clock = formatPeerNoticeClock(finishedAt, utcOffsetMin);
  let body;
  if (kind === "idle") {
    body = `Session "${label}" went idle at ${clock}.`;
    if (detail !== null && detail !== undefined) body += ` Its last turn ended with: «${detail}».`;
  } else if (kind === "exited") body = `Session "${label}" exited at ${clock}; it will not go idle again.`;
  else if (kind === "unavailable") body = `Session "${label}" is not holding your idle subscription: ${PEER_IDLE_UNAVAILABLE_CAUSES}.`;
  else body = `Your idle subscription to session "${label}" expired with no answer from it.`;
  return `${TAG} ${body} ${TAIL}`;
}

/**
 * IDLE-TEXT-7: the host-facing line that a peer subscribed to this session's idle notices; no
 * detail of the last turn is shared unless `detailShared`.
 * @param {string} address
 * @param {boolean} [detailShared]
 * @returns {string}
 */
export function describePeerIdleSubscription(address, detailShared = false) {
  return describe(address, detailShared, false);
}

/** IDLE-TEXT-7, with option fold_lookalikes or without. @param {string} address @param {boolean} detailShared @param {boolean} foldLookalikes */
function describe(address, detailShared, foldLookalikes) {
  // IDLE-IF-3: address, then detail_shared.
  if (typeof address !== "string") fail("invalid_argument", "address");
  if (typeof detailShared !== "boolean") fail("invalid_argument", "detail_shared");
  const shared = detailShared
    ? "it is told the time and a one-line detail of the last turn"
    : "it is told the time only; no detail of the last turn is shared";
  return `Session "${labelOrUnnamed(foldLookalikes, address)}" subscribed to this session's idle notices: ` +
    `when this session next goes idle or exits, ${shared}.`;
}

/** @typedef {"idle" | "exited" | "unavailable"} AnswerKind */
/** @typedef {{ kind: AnswerKind, finishedAt: number | null, detail: string | null }} Answer */
/** @typedef {{ id: number, target: string, label: string, sentAt: number }} Outstanding */
/** @typedef {{ requester: string, subscription: number, addedAt: number, parity: boolean }} Subscriber */
/** @typedef {{ to: string, subscription: number, kind: AnswerKind, finished_at: number | null, detail: string | null }} SentAnswer */
/** @typedef {{ subscription: number, kind: PeerIdleNoticeKind, text: string }} Notice */
/** @typedef {{ notices: Notice[], sent: SentAnswer[], swept: { requester: string, subscription: number }[] }} Effects */
/** @typedef {"idle" | "busy" | "settling" | "backing_off" | "exited" | "shut_down"} Phase */
/** @typedef {import("./protocol.mjs").Args} Args */

const ANSWER_FIELDS = vocabulary(INTERFACE, "answer_fields");
const ANSWER_KINDS = vocabulary(INTERFACE, "answer_kinds");

/**
 * IDLE-REQ-6: a recognised answer, or unavailable.
 * @param {unknown} answer
 * @returns {Answer}
 */
function readAnswer(answer) {
  if (isObject(answer) && Object.keys(answer).every((k) => ANSWER_FIELDS.includes(k))) {
    const { kind, finished_at: fin = null, detail = null } = answer;
    if (typeof kind === "string" && ANSWER_KINDS.includes(kind) && (fin === null || isNatural(fin)) &&
        (detail === null || typeof detail === "string")) {
      return { kind: /** @type {AnswerKind} */ (kind), finishedAt: fin, detail };
    }
  }
  return { kind: "unavailable", finishedAt: null, detail: null };
}

// -- the machine -------------------------------------------------------------------------

export class IdleSubscriptions {
  /** @param {unknown} config */
  constructor(config) {
    /** @param {string} why */
    const bad = (why) => new IdleError("invalid_config", why);
    if (!isObject(config)) throw bad("config is an object");
    for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) throw bad(`unknown config key ${key}`);
    // Absent keys take the interface data's defaults; a null stays null (and is rejected).
    const c = withConfigDefaults(INTERFACE, config);
    for (const key of ["start_ms", "outstanding_cap", "priors_kept", "subscriber_cap", "debounce_ms"]) {
      if (!isNatural(c[key])) throw bad(`${key} is a safe natural`);
    }
    for (const key of ["ttl_ms", "held_backoff_ms"]) if (!isNatural(c[key]) || c[key] === 0) throw bad(`${key} >= 1`);
    if (!isOffset(c.reader_utc_offset_min)) throw bad("reader_utc_offset_min");
    if (typeof c.last_turn_text_seat !== "boolean") throw bad("last_turn_text_seat");
    const options = c.options;
    if (!isObject(options)) throw bad("options is an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") throw bad(`bad option ${name}`);
    }
    /** @type {IdleConfig} every value checked above */
    this.c = /** @type {IdleConfig} */ (c);
    /** @type {Record<string, unknown>} */
    this.options = options;
    /** IDLE-OPT-5: the sanitiser folds lookalikes. */
    this.foldLookalikes = options.fold_lookalikes === true;
    this.now = this.c.start_ms;
    /** @type {Map<number, Outstanding>} */
    this.outstanding = new Map();
    /** @type {Map<string, Subscriber>} keyed by requester */
    this.subscribers = new Map();
    /** @type {Phase} */
    this.phase = "idle";
    /** @type {number | null} */
    this.fireAt = null;
    /** @type {number | null} */
    this.finishedAt = null;
    /** @type {string | null} */
    this.detail = null;
    this.held = 0;
    /** @type {number | null} */
    this.closedAt = null;
  }

  snapshot() {
    return { phase: this.phase, outstanding: this.outstanding.size, subscribers: this.subscribers.size };
  }

  /**
   * The requester's notice for one resolved subscription, through the seed-named renderer.
   * @param {Outstanding} held @param {PeerIdleNoticeKind} kind @param {number | null} finishedAt @param {string | null} detail
   * @returns {Notice}
   */
  render(held, kind, finishedAt, detail) {
    const shown = kind === "idle" && detail !== null ? sanitise(detail, this.foldLookalikes) : undefined;
    const time = (kind === "idle" || kind === "exited") && finishedAt !== null ? finishedAt : undefined;
    const text = renderCrossSessionIdleNotice({ kind, label: held.label, finishedAt: time, detail: shown },
      this.c.reader_utc_offset_min);
    return { subscription: held.id, kind, text };
  }

  /** @param {Args} args @param {Effects} fx IDLE-REQ-1..3 */
  subscribe({ target, subscription: id, label = null }, fx) {
    if (!isAddress(target)) return fail("invalid_argument", "target");
    if (!isNatural(id)) return fail("invalid_argument", "subscription");
    if (label !== null && typeof label !== "string") fail("invalid_argument", "label");
    if (this.outstanding.has(id)) fail("duplicate_subscription", "outstanding");
    if (this.outstanding.size >= this.c.outstanding_cap) return { verdict: "cap", pushed_out: null };
    const priors = [...this.outstanding.values()].filter((o) => o.target === target);
    let pushedOut = null;
    if (priors.length > this.c.priors_kept) { // keep at most priors_kept earlier ones
      const oldest = priors[0];
      this.outstanding.delete(oldest.id);
      pushedOut = oldest.id;
      if (this.options.notify_pushed_out) fx.notices.push(this.render(oldest, "unavailable", null, null));
    }
    this.outstanding.set(id, { id, target, label: labelOrUnnamed(this.foldLookalikes, /** @type {string | null} */ (label), target), sentAt: this.now });
    return { verdict: "sent", pushed_out: pushedOut };
  }

  /** @param {Args} args @param {Effects} fx IDLE-REQ-5..8 */
  receiveNotice({ subscription, notice = null, from = null }, fx) {
    if (!isNatural(subscription)) return fail("invalid_argument", "subscription");
    if (from !== null && typeof from !== "string") fail("invalid_argument", "from");
    const held = this.outstanding.get(subscription);
    if (held === undefined) return { resolved: false };
    if (this.options.answers_from_target_only && from !== held.target) return { resolved: false }; // IDLE-OPT-4
    this.outstanding.delete(subscription);
    const { kind, finishedAt, detail } = readAnswer(notice);
    fx.notices.push(this.render(held, kind, finishedAt, detail));
    return { resolved: true };
  }

  /** @param {Args} args @param {Effects} fx IDLE-TGT-1..4, IDLE-END-3 */
  addSubscriber({ requester, subscription, parity = null }, fx) {
    if (!isAddress(requester)) return fail("invalid_argument", "requester");
    if (!isNatural(subscription)) return fail("invalid_argument", "subscription");
    if (parity === null) parity = false;
    if (typeof parity !== "boolean") return fail("invalid_argument", "parity");
    /** @param {string} to @param {number} sub @param {AnswerKind} kind @param {number | null} [finishedAt] */
    const answer = (to, sub, kind, finishedAt = null) =>
      fx.sent.push({ to, subscription: sub, kind, finished_at: finishedAt, detail: null });
    const refused = { accepted: false, displaced: null, announcement: null };
    if (this.phase === "exited") { answer(requester, subscription, "exited", this.closedAt); return refused; }
    if (this.phase === "shut_down") { answer(requester, subscription, "unavailable"); return refused; }
    const current = this.subscribers.get(requester);
    if (current !== undefined && current.subscription === subscription) { // IDLE-TGT-5
      return { accepted: true, displaced: null, announcement: null };
    }
    let displaced = null;
    const older = this.subscribers.get(requester);
    if (older !== undefined) {
      this.subscribers.delete(requester);
      displaced = older.subscription;
      answer(older.requester, older.subscription, "unavailable");
    } else if (this.subscribers.size >= this.c.subscriber_cap) {
      answer(requester, subscription, "unavailable");
      return refused;
    }
    this.subscribers.set(requester, { requester, subscription, addedAt: this.now, parity });
    if (this.options.fire_when_already_idle && this.phase === "idle") { // IDLE-OPT-2
      this.phase = "settling";
      this.fireAt = this.now + this.c.debounce_ms;
    }
    const shared = this.c.last_turn_text_seat && parity;
    return { accepted: true, displaced, announcement: describe(requester, shared, this.foldLookalikes) };
  }

  open() {
    if (this.phase === "exited" || this.phase === "shut_down") fail("target_closed", "closed");
  }

  turnStarted() { // IDLE-FIRE-2
    this.open();
    if (this.phase === "busy") fail("turn_in_progress", "busy");
    this.phase = "busy";
    this.fireAt = null;
    return {};
  }

  /** @param {Args} args IDLE-FIRE-1 */
  turnFinished({ last_turn_text: text = null }) {
    if (text !== null && typeof text !== "string") return fail("invalid_argument", "last_turn_text");
    this.open();
    if (this.phase !== "busy") fail("no_turn", "no turn");
    this.phase = "settling";
    this.fireAt = this.now + this.c.debounce_ms;
    this.finishedAt = this.now;
    this.detail = text === null ? null : sanitise(text, this.foldLookalikes) ?? null;
    return {};
  }

  /** @param {Args} args IDLE-HELD-1, IDLE-OPT-3 */
  setHeld({ count }) {
    if (!isNatural(count)) return fail("invalid_argument", "count");
    this.held = count;
    if (count === 0 && this.phase === "backing_off" && this.options.fire_on_release) {
      this.phase = "settling";
      this.fireAt = this.now + this.c.debounce_ms;
    }
    return {};
  }

  /** @param {"exited" | "shut_down"} phase @param {"exited" | "unavailable"} kind @param {Effects} fx IDLE-END-1/2 */
  close(phase, kind, fx) {
    this.open();
    for (const s of this.subscribers.values()) {
      fx.sent.push({ to: s.requester, subscription: s.subscription, kind,
        finished_at: kind === "exited" ? this.now : null, detail: null });
    }
    this.subscribers.clear();
    this.phase = phase;
    this.fireAt = null;
    this.closedAt = this.now;
    return {};
  }

  /** @param {Args} args @param {Effects} fx IDLE-TIME-1/2 */
  advance({ now_ms: now }, fx) {
    if (!isNatural(now) || now < this.now) return fail("invalid_time", "now_ms");
    this.now = now;
    const ttl = this.c.ttl_ms;
    for (const o of [...this.outstanding.values()]) {
      if (o.sentAt + ttl <= now) {
        this.outstanding.delete(o.id);
        fx.notices.push(this.render(o, "expired", null, null));
      }
    }
    let fire = null;
    if ((this.phase === "settling" || this.phase === "backing_off") && this.fireAt !== null && this.fireAt <= now) {
      if (this.held === 0) fire = this.fireAt;
      else { // IDLE-HELD-2
        const backoff = this.c.held_backoff_ms;
        const checks = Math.floor((now - this.fireAt) / backoff) + 1;
        this.phase = "backing_off";
        this.fireAt += checks * backoff;
      }
    }
    const until = fire === null ? now : fire;
    for (const s of [...this.subscribers.values()]) {
      if (s.addedAt + ttl <= until) {
        this.subscribers.delete(s.requester);
        fx.swept.push({ requester: s.requester, subscription: s.subscription });
      }
    }
    if (fire !== null) {
      for (const s of this.subscribers.values()) {
        const shared = this.c.last_turn_text_seat && s.parity;
        fx.sent.push({ to: s.requester, subscription: s.subscription, kind: "idle",
          finished_at: this.finishedAt, detail: shared ? this.detail : null });
      }
      this.subscribers.clear();
      this.phase = "idle";
      this.fireAt = null;
    }
    return {};
  }
}

// -- the case driver (IDLE-IF-*, IDLE-OUT-*) ----------------------------------------------
// The helper events are one call each of the seed-named functions (README.md has the table).
// JSON has no undefined: a null or absent time or detail is passed as undefined (the seed's
// "not given"), and an undefined label comes back as null.

/** @typedef {import("./protocol.mjs").Step} Step */
/** @typedef {import("./protocol.mjs").CaseResult} CaseResult */

/** @param {unknown} v JSON's null as the seed's "not given". */
const given = (v) => (v === null ? undefined : v);

/**
 * The helper events, each one call of a seed-named function (or its fold_lookalikes form); the
 * called function checks its arguments. Every argument is present, over the data's defaults.
 * @type {Record<string, (a: Args, foldLookalikes: boolean) => unknown>}
 */
const HELPERS = {
  sanitise_label: (a, fold) => sanitise(/** @type {string} */ (a.raw), fold) ?? null,
  format_clock: (a) => formatPeerNoticeClock(/** @type {number | undefined} */ (given(a.epoch_ms)),
    /** @type {number} */ (a.utc_offset_min)),
  render_notice: (a) => renderCrossSessionIdleNotice({
    kind: /** @type {PeerIdleNoticeKind} */ (a.kind), label: /** @type {string} */ (a.label),
    finishedAt: /** @type {number | undefined} */ (given(a.finished_at)), detail: /** @type {string | undefined} */ (given(a.detail)),
  }, /** @type {number} */ (a.utc_offset_min)),
  describe_subscription: (a, fold) => describe(/** @type {string} */ (a.address), /** @type {boolean} */ (a.detail_shared), fold),
  is_notice_kind: (a) => isPeerIdleNoticeKind(a.value),
};

/**
 * IDLE-IF-1..3: `args` is an object naming only the event's arguments; then each argument over
 * the interface data's defaults (a null optional argument takes its default too).
 * @param {string} event @param {unknown} args @returns {Args}
 */
function callArguments(event, args) {
  const defined = /** @type {import("./interface-data.mjs").InterfaceEvent} */ (eventOf(INTERFACE, event));
  if (!isObject(args)) return fail("invalid_argument", "args must be an object");
  for (const key of unknownArguments(defined, args)) fail("invalid_argument", `${event} takes no argument ${key}`);
  return withDefaults(defined, args);
}

/** @param {IdleSubscriptions} m @param {Step} step @returns {Record<string, unknown>} */
function applyStep(m, { event, args = {} }) {
  const defined = eventOf(INTERFACE, event);
  if (!defined) throw new Error(`unknown idle-subscriptions event ${event}`);
  try {
    const a = callArguments(event, args);
    if (defined.pure) return { [defined.outputs[0]]: HELPERS[event](a, m.foldLookalikes) };
    /** @type {Effects} */
    const fx = { notices: [], sent: [], swept: [] };
    const own = MACHINE_EVENTS[event](m, a, fx);
    return { ...own, ...fx, ...m.snapshot() };
  } catch (error) {
    if (!(error instanceof IdleError)) throw error;
    return defined.pure ? { error: error.code } : { error: error.code, ...m.snapshot() };
  }
}

/** @type {Record<string, (m: IdleSubscriptions, a: Args, fx: Effects) => object>} */
const MACHINE_EVENTS = {
  subscribe: (m, a, fx) => m.subscribe(a, fx),
  receive_notice: (m, a, fx) => m.receiveNotice(a, fx),
  add_subscriber: (m, a, fx) => m.addSubscriber(a, fx),
  turn_started: (m) => m.turnStarted(),
  turn_finished: (m, a) => m.turnFinished(a),
  set_held: (m, a) => m.setHeld(a),
  exit: (m, a, fx) => m.close("exited", "exited", fx),
  shutdown: (m, a, fx) => m.close("shut_down", "unavailable", fx),
  advance: (m, a, fx) => m.advance(a, fx),
};

/**
 * @param {Record<string, unknown>} config @param {Step[]} steps
 * @returns {CaseResult}
 */
export function runCase(config, steps) {
  return runSteps(IdleError, () => new IdleSubscriptions(config), applyStep, steps);
}
