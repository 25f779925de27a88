"""Each finding's trace, under the seed default and under its option (spec/idle-subscriptions.md).

The explorer shows the same properties failing by default and holding with
the options (``inboxspec findings``); these are the spec's written traces,
run on the reference.
"""

from __future__ import annotations

from inboxspec.impl.idle_subscriptions import IdleConfig, IdleOptions, IdleSubscriptions


def test_f1_pushed_out_prior_is_silent_by_default_and_told_with_the_option() -> None:
    for option, told in ((False, False), (True, True)):
        machine = IdleSubscriptions(IdleConfig(priors_kept=0, options=IdleOptions(notify_pushed_out=option)))
        machine.subscribe("s2", 1)
        result = machine.subscribe("s2", 2)
        assert result.pushed_out == 1
        assert bool(result.effects.notices) is told
        resolved, _ = machine.receive_notice(1, {"kind": "unavailable"})
        assert resolved is False


def test_f2_idle_target_waits_by_default_and_fires_with_the_option() -> None:
    for option, fires in ((False, False), (True, True)):
        machine = IdleSubscriptions(IdleConfig(options=IdleOptions(fire_when_already_idle=option)))
        machine.add_subscriber("me", 1)
        effects = machine.advance(750)
        assert bool(effects.sent) is fires


def test_f3_release_waits_a_back_off_by_default_and_rearms_with_the_option() -> None:
    for option, answered_at in ((False, 30_750), (True, 1_500)):
        machine = IdleSubscriptions(IdleConfig(options=IdleOptions(fire_on_release=option)))
        machine.add_subscriber("me", 1)
        machine.set_held(1)
        machine.turn_started()
        machine.turn_finished()
        machine.advance(750)
        machine.set_held(0)
        assert not machine.advance(answered_at - 1).sent
        assert [s.kind for s in machine.advance(answered_at).sent] == ["idle"]


def test_f4_any_sender_resolves_by_default_and_only_the_target_with_the_option() -> None:
    for option, resolved in ((False, True), (True, False)):
        machine = IdleSubscriptions(IdleConfig(options=IdleOptions(answers_from_target_only=option)))
        machine.subscribe("s2", 1, "Builder")
        assert machine.receive_notice(1, {"kind": "idle", "finished_at": 0}, "s3")[0] is resolved
    assert machine.receive_notice(1, {"kind": "idle", "finished_at": 0}, "s2")[0] is True
