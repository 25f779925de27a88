// @ts-check
// The package's API: the example port's machines under the names their seeds give them.
// Seed 000: InboxWakePolicy. Seed 001 (peer-notices.d.ts): every constant and function it declares.
// Seed 002: PlacementWriterContextError and InboxCache. adapter.mjs wires the same calls to the
// conformance protocol; README.md has the table of which protocol event is which call.

export {
  InboxWakePolicy, WakeGateError, defaultMaxInboxWakeStreak, defaultScheduledSelfCadenceFloor,
} from "./wake-gate.mjs";
export {
  PEER_HELD_QUEUE_CAP, CROSS_SESSION_DIALOG_EXPIRY_VALUES, CROSS_SESSION_DIALOG_EXPIRY_DEFAULT,
  resolveCrossSessionDialogExpiry, CROSS_SESSION_HOLD_CAUSES, PEER_HELD_REVIEW_CAUSES, PEER_DELIVERY_RECEIPT_STATES,
  isPeerDeliveryReceiptState, PEER_DROP_REASONS, peerRecipientSuffix, renderCrossSessionDeliveryNotice,
  describePeerDropReasons, renderCrossSessionDroppedNotice, PeerDeliveryError,
} from "./peer-delivery.mjs";
export {
  PEER_IDLE_SUBSCRIPTION_TTL_MS, PEER_IDLE_SUBSCRIBER_TABLE_CAP, PEER_IDLE_OUTSTANDING_CAP, PEER_IDLE_PRIORS_KEPT,
  PEER_IDLE_FIRE_DEBOUNCE_MS, PEER_IDLE_HELD_BACKOFF_MS, PEER_IDLE_LABEL_MAX, PEER_IDLE_NOTICE_KINDS,
  isPeerIdleNoticeKind, PEER_IDLE_UNAVAILABLE_CAUSES, peerIdleNoticeLabel, formatPeerNoticeClock,
  renderCrossSessionIdleNotice, describePeerIdleSubscription, IdleError,
} from "./idle-subscriptions.mjs";
export {
  PlacementWriterContextError, SharedWriterRevisionError, PLACEMENT_WRITER_ROOT_CATEGORIES,
  PLACEMENT_WRITER_CAUSE_CLASSES,
} from "./writer-proofs.mjs";
export { InboxCache, RefreshError } from "./inbox-refresh.mjs";
// The host (spec/host.md): no seed names it; its sessions compose the machines above.
export { Host, HostError } from "./host.mjs";

// The types, under the seeds' names where a seed names them.
/** @typedef {import("./wake-gate.mjs").AgentMessage} AgentMessage */
/** @typedef {import("./wake-gate.mjs").InboxWakeLane} InboxWakeLane */
/** @typedef {import("./wake-gate.mjs").InboxWakeDecision} InboxWakeDecision */
/** @typedef {import("./wake-gate.mjs").InboxWakePolicySettings} InboxWakePolicySettings */
/** @typedef {import("./peer-delivery.mjs").CrossSessionDialogExpiry} CrossSessionDialogExpiry */
/** @typedef {import("./peer-delivery.mjs").ResolvedCrossSessionDialogExpiry} ResolvedCrossSessionDialogExpiry */
/** @typedef {import("./peer-delivery.mjs").CrossSessionHoldCause} CrossSessionHoldCause */
/** @typedef {import("./peer-delivery.mjs").PeerDeliveryReceiptState} PeerDeliveryReceiptState */
/** @typedef {import("./peer-delivery.mjs").PeerDropReason} PeerDropReason */
/** @typedef {import("./idle-subscriptions.mjs").PeerIdleNoticeKind} PeerIdleNoticeKind */
/** @typedef {import("./idle-subscriptions.mjs").PeerIdleNoticeFields} PeerIdleNoticeFields */
/** @typedef {import("./writer-proofs.mjs").PlacementWriterRootCategory} PlacementWriterRootCategory */
/** @typedef {import("./writer-proofs.mjs").PlacementWriterContextPhase} PlacementWriterContextPhase */
/** @typedef {import("./writer-proofs.mjs").SyncPlacementWriterFailureDetail} SyncPlacementWriterFailureDetail */
/** @typedef {import("./inbox-refresh.mjs").InboxInvalidation} InboxInvalidation */
/** @typedef {import("./host.mjs").HostRecord} HostRecord */
/** @typedef {import("./host.mjs").SessionState} SessionState */
