"""The searches' limits: where an exploration and a refinement stop unless asked to go further.

They live apart from the searches so that the command line can state them in its help without
importing the searches themselves (``checker/commands.py``): every ``inboxspec`` command builds the
whole parser, ``conform`` included, and importing the searches took about 15 ms of its 0.22 s start
(with bytecode cached; about 45 ms without).
"""

# The most distinct states an exploration visits before it stops with ExplorationTooLarge, unless
# the caller allows more (``inboxspec explore --max-states``). The largest documented exploration,
# the host on three sessions, visits 313,304; a bound given by mistake (a wake gate's max_streak of
# a million, an idle subscription's TTL of 10**30 ms) otherwise grows until memory runs out.
# WARNING: the README states it and explore.py's MAX_LETTERS; tests/test_checker.py compares them.
MAX_STATES = 1_000_000

# The most steps a refinement compares unless asked for more (``refine --max-steps``): the sequences
# grow as the alphabet to the depth, and each step replays its sequence on the reference, so a depth
# the limit allows can still run for days (the host's depth 8). Peer delivery's depth 4, the command
# line's default, compares about 420,000; the check's depth 3, at most 17,000 on any machine.
# WARNING: the README states it; tests/test_checker.py compares them.
MAX_REFINE_STEPS = 1_000_000
