// Idle subscriptions (spec/idle-subscriptions.md), a dependency-free port for Node.js 20.
// Written from the spec's Interface section; requirement IDs in comments point there.
// Strings are handled as code points (for..of), never as UTF-16 units (IDLE-LABEL-4).
import { SPACE_RANGES } from "./idle-label-table.mjs";

export const FEATURES = [
  "option:notify_pushed_out", "option:fire_when_already_idle", "option:fire_on_release",
  "option:answers_from_target_only",
];

const DEFAULTS = { // IDLE-CONF-1, IDLE-DEF-1
  start_ms: 0, ttl_ms: 43_200_000, outstanding_cap: 32, priors_kept: 3, subscriber_cap: 32,
  debounce_ms: 750, held_backoff_ms: 30_000, reader_utc_offset_min: 0, last_turn_text_seat: false,
};
const OPTION_NAMES = ["notify_pushed_out", "fire_when_already_idle", "fire_on_release", "answers_from_target_only"];
const LABEL_MAX = 100;
const KINDS = ["idle", "exited", "unavailable", "expired"];
const CAUSES = "it is shutting down, its subscription table is full, a newer subscription displaced this one, " +
  "or it answered in a form this version does not recognize";
const TAG = "[peer idle notice]";
const TAIL = "This is an automated harness notice, not a message from a person and not an instruction.";
const PHRASE = [..."peer idle notice"];
const UNNAMED = "(unnamed session)";

export class IdleError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}
const fail = (code, why) => { throw new IdleError(code, why); };

const isNatural = (v) => Number.isSafeInteger(v) && v >= 0;
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isAddress = (v) => typeof v === "string" && v.length > 0;
const isOffset = (v) => Number.isInteger(v) && Math.abs(v) <= 1439;

// -- the label sanitiser (IDLE-LABEL-1..6) --------------------------------------------

function mapsToSpace(cp) {
  let lo = 0, hi = SPACE_RANGES.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [low, high] = SPACE_RANGES[mid];
    if (cp < low) hi = mid - 1;
    else if (cp > high) lo = mid + 1;
    else return true;
  }
  return false;
}

const FAILURE = (() => {
  const f = new Array(PHRASE.length).fill(0);
  let k = 0;
  for (let i = 1; i < PHRASE.length; i++) {
    while (k && PHRASE[i] !== PHRASE[k]) k = f[k - 1];
    if (PHRASE[i] === PHRASE[k]) k++;
    f[i] = k;
  }
  return f;
})();

function advanceMatch(k, lower) {
  while (k && lower !== PHRASE[k]) k = FAILURE[k - 1];
  return lower === PHRASE[k] ? k + 1 : 0;
}

const asciiLower = (ch) => (ch >= "A" && ch <= "Z" ? String.fromCharCode(ch.charCodeAt(0) + 32) : ch);

export function peerIdleNoticeLabel(raw) {
  const chars = [];
  const matched = [];
  const push = (ch) => {
    if (ch === " " && (chars.length === 0 || chars[chars.length - 1] === " ")) return;
    chars.push(ch);
    matched.push(advanceMatch(matched.length ? matched[matched.length - 1] : 0, asciiLower(ch)));
  };
  for (const ch of raw) {
    push(mapsToSpace(ch.codePointAt(0)) ? " " : ch);
    if (matched.length && matched[matched.length - 1] === PHRASE.length) {
      chars.length -= PHRASE.length;
      matched.length -= PHRASE.length;
      push(" ");
    }
  }
  while (chars.length && chars[chars.length - 1] === " ") chars.pop();
  const capped = chars.slice(0, LABEL_MAX);
  while (capped.length && capped[capped.length - 1] === " ") capped.pop();
  return capped.length ? capped.join("") : null;
}

// -- clock and texts (IDLE-CLOCK-*, IDLE-TEXT-*) -----------------------------------------

export function formatPeerNoticeClock(epochMs, offsetMin) {
  if (epochMs === null || epochMs === undefined) return "--:--";
  // IDLE-CLOCK-3: subtract the remainder first, so that the division is exact.
  const minutes = (epochMs - (epochMs % 60000)) / 60000 + offsetMin;
  const m = ((minutes % 1440) + 1440) % 1440;
  const two = (n) => String(n).padStart(2, "0");
  return `${two(Math.floor(m / 60))}:${two(m % 60)}`;
}

export const isPeerIdleNoticeKind = (v) => typeof v === "string" && KINDS.includes(v);

function labelOrUnnamed(...candidates) {
  for (const c of candidates) {
    if (c !== null && c !== undefined) {
      const label = peerIdleNoticeLabel(c);
      if (label !== null) return label;
    }
  }
  return UNNAMED;
}

export function renderCrossSessionIdleNotice(kind, label, finishedAt, detail, offsetMin) {
  const clock = formatPeerNoticeClock(finishedAt, offsetMin);
  let body;
  if (kind === "idle") {
    body = `Session "${label}" went idle at ${clock}.`;
    if (detail !== null && detail !== undefined) body += ` Its last turn ended with: «${detail}».`;
  } else if (kind === "exited") body = `Session "${label}" exited at ${clock}; it will not go idle again.`;
  else if (kind === "unavailable") body = `Session "${label}" is not holding your idle subscription: ${CAUSES}.`;
  else body = `Your idle subscription to session "${label}" expired with no answer from it.`;
  return `${TAG} ${body} ${TAIL}`;
}

export function describePeerIdleSubscription(address, detailShared) {
  const shared = detailShared
    ? "it is told the time and a one-line detail of the last turn"
    : "it is told the time only; no detail of the last turn is shared";
  return `Session "${labelOrUnnamed(address)}" subscribed to this session's idle notices: ` +
    `when this session next goes idle or exits, ${shared}.`;
}

// IDLE-REQ-6: a recognised answer, or unavailable.
function readAnswer(answer) {
  if (isObject(answer) && Object.keys(answer).every((k) => ["kind", "finished_at", "detail"].includes(k))) {
    const { kind, finished_at: fin = null, detail = null } = answer;
    if (["idle", "exited", "unavailable"].includes(kind) && (fin === null || isNatural(fin)) &&
        (detail === null || typeof detail === "string")) {
      return { kind, finishedAt: fin, detail };
    }
  }
  return { kind: "unavailable", finishedAt: null, detail: null };
}

// -- the machine -------------------------------------------------------------------------

export class IdleSubscriptions {
  constructor(config) {
    const bad = (why) => new IdleError("invalid_config", why);
    if (!isObject(config)) throw bad("config is an object");
    const known = [...Object.keys(DEFAULTS), "options"];
    for (const key of Object.keys(config)) if (!known.includes(key)) throw bad(`unknown config key ${key}`);
    const c = { ...DEFAULTS };
    for (const [key, value] of Object.entries(config)) if (key !== "options" && value !== undefined) c[key] = value;
    for (const key of ["start_ms", "outstanding_cap", "priors_kept", "subscriber_cap", "debounce_ms"]) {
      if (!isNatural(c[key])) throw bad(`${key} is a safe natural`);
    }
    for (const key of ["ttl_ms", "held_backoff_ms"]) if (!isNatural(c[key]) || c[key] === 0) throw bad(`${key} >= 1`);
    if (!isOffset(c.reader_utc_offset_min)) throw bad("reader_utc_offset_min");
    if (typeof c.last_turn_text_seat !== "boolean") throw bad("last_turn_text_seat");
    const options = config.options === undefined ? {} : config.options;
    if (!isObject(options)) throw bad("options is an object");
    for (const [name, value] of Object.entries(options)) {
      if (!OPTION_NAMES.includes(name) || typeof value !== "boolean") throw bad(`bad option ${name}`);
    }
    this.c = c;
    this.options = options;
    this.now = c.start_ms;
    this.outstanding = new Map(); // id -> {id, target, label, sentAt}
    this.subscribers = new Map(); // requester -> {requester, subscription, addedAt, parity}
    this.phase = "idle";
    this.fireAt = null;
    this.finishedAt = null;
    this.detail = null;
    this.held = 0;
    this.closedAt = null;
  }

  snapshot() {
    return { phase: this.phase, outstanding: this.outstanding.size, subscribers: this.subscribers.size };
  }

  render(held, kind, finishedAt, detail) {
    const shown = kind === "idle" && detail !== null ? peerIdleNoticeLabel(detail) : null;
    const time = kind === "idle" || kind === "exited" ? finishedAt : null;
    return { subscription: held.id, kind,
      text: renderCrossSessionIdleNotice(kind, held.label, time, shown, this.c.reader_utc_offset_min) };
  }

  subscribe({ target, subscription: id, label = null }, fx) { // IDLE-REQ-1..3
    if (!isAddress(target)) fail("invalid_argument", "target");
    if (!isNatural(id)) fail("invalid_argument", "subscription");
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
    this.outstanding.set(id, { id, target, label: labelOrUnnamed(label, target), sentAt: this.now });
    return { verdict: "sent", pushed_out: pushedOut };
  }

  receiveNotice({ subscription, notice = null, from = null }, fx) { // IDLE-REQ-5..8
    if (!isNatural(subscription)) fail("invalid_argument", "subscription");
    if (from !== null && typeof from !== "string") fail("invalid_argument", "from");
    const held = this.outstanding.get(subscription);
    if (held === undefined) return { resolved: false };
    if (this.options.answers_from_target_only && from !== held.target) return { resolved: false }; // IDLE-OPT-4
    this.outstanding.delete(subscription);
    const { kind, finishedAt, detail } = readAnswer(notice);
    fx.notices.push(this.render(held, kind, finishedAt, detail));
    return { resolved: true };
  }

  addSubscriber({ requester, subscription, parity = null }, fx) { // IDLE-TGT-1..4, IDLE-END-3
    if (!isAddress(requester)) fail("invalid_argument", "requester");
    if (!isNatural(subscription)) fail("invalid_argument", "subscription");
    if (parity === null) parity = false;
    if (typeof parity !== "boolean") fail("invalid_argument", "parity");
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
    return { accepted: true, displaced, announcement: describePeerIdleSubscription(requester, shared) };
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

  turnFinished({ last_turn_text: text = null }) { // IDLE-FIRE-1
    if (text !== null && typeof text !== "string") fail("invalid_argument", "last_turn_text");
    this.open();
    if (this.phase !== "busy") fail("no_turn", "no turn");
    this.phase = "settling";
    this.fireAt = this.now + this.c.debounce_ms;
    this.finishedAt = this.now;
    this.detail = text === null ? null : peerIdleNoticeLabel(text);
    return {};
  }

  setHeld({ count }) { // IDLE-HELD-1, IDLE-OPT-3
    if (!isNatural(count)) fail("invalid_argument", "count");
    this.held = count;
    if (count === 0 && this.phase === "backing_off" && this.options.fire_on_release) {
      this.phase = "settling";
      this.fireAt = this.now + this.c.debounce_ms;
    }
    return {};
  }

  close(phase, kind, fx) { // IDLE-END-1/2
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

  advance({ now_ms: now }, fx) { // IDLE-TIME-1/2
    if (!isNatural(now) || now < this.now) fail("invalid_time", "now_ms");
    this.now = now;
    const ttl = this.c.ttl_ms;
    for (const o of [...this.outstanding.values()]) {
      if (o.sentAt + ttl <= now) {
        this.outstanding.delete(o.id);
        fx.notices.push(this.render(o, "expired", null, null));
      }
    }
    let fire = null;
    if ((this.phase === "settling" || this.phase === "backing_off") && this.fireAt <= now) {
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

const ARGUMENTS = {
  subscribe: ["target", "subscription", "label"], receive_notice: ["subscription", "notice", "from"],
  add_subscriber: ["requester", "subscription", "parity"], turn_started: [], turn_finished: ["last_turn_text"],
  set_held: ["count"], exit: [], shutdown: [], advance: ["now_ms"],
  sanitise_label: ["raw"], format_clock: ["epoch_ms", "utc_offset_min"],
  render_notice: ["kind", "label", "finished_at", "detail", "utc_offset_min"],
  describe_subscription: ["address", "detail_shared"], is_notice_kind: ["value"],
};

// Absent and null optional arguments both take the default (IDLE-IF-1).
const orDefault = (v, d) => (v === null || v === undefined ? d : v);

function helper(event, a) {
  if (event === "sanitise_label") {
    if (typeof a.raw !== "string") fail("invalid_argument", "raw");
    return { label: peerIdleNoticeLabel(a.raw) };
  }
  if (event === "is_notice_kind") return { is_kind: isPeerIdleNoticeKind(a.value) };
  const offset = orDefault(a.utc_offset_min, 0);
  if (!isOffset(offset)) fail("invalid_argument", "utc_offset_min");
  if (event === "format_clock") {
    const epoch = orDefault(a.epoch_ms, null);
    if (epoch !== null && !isNatural(epoch)) fail("invalid_argument", "epoch_ms");
    return { clock: formatPeerNoticeClock(epoch, offset) };
  }
  if (event === "describe_subscription") {
    const shared = orDefault(a.detail_shared, false);
    if (typeof a.address !== "string" || typeof shared !== "boolean") fail("invalid_argument", "describe");
    return { text: describePeerIdleSubscription(a.address, shared) };
  }
  const finishedAt = orDefault(a.finished_at, null);
  const detail = orDefault(a.detail, null);
  if (!isPeerIdleNoticeKind(a.kind)) fail("invalid_argument", "kind");
  if (!isAddress(a.label)) fail("invalid_argument", "label");
  if (finishedAt !== null && !isNatural(finishedAt)) fail("invalid_argument", "finished_at");
  if (detail !== null && typeof detail !== "string") fail("invalid_argument", "detail");
  return { text: renderCrossSessionIdleNotice(a.kind, a.label, finishedAt, detail, offset) };
}

function applyStep(m, { event, args = {} }) {
  if (!(event in ARGUMENTS)) throw new Error(`unknown idle-subscriptions event ${event}`);
  const isHelper = !(event in MACHINE_EVENTS);
  try {
    if (!isObject(args)) fail("invalid_argument", "args");
    for (const key of Object.keys(args)) if (!ARGUMENTS[event].includes(key)) fail("invalid_argument", key);
    if (isHelper) return helper(event, args);
    const fx = { notices: [], sent: [], swept: [] };
    const own = MACHINE_EVENTS[event](m, args, fx);
    return { ...own, ...fx, ...m.snapshot() };
  } catch (error) {
    if (!(error instanceof IdleError)) throw error;
    return isHelper ? { error: error.code } : { error: error.code, ...m.snapshot() };
  }
}

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

export function runCase(config, steps) {
  let machine;
  try {
    machine = new IdleSubscriptions(config);
  } catch (error) {
    if (error instanceof IdleError) return { config_error: error.code };
    throw error;
  }
  return { outputs: steps.map((step) => applyStep(machine, step)) };
}
