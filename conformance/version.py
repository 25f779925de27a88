"""The distribution's version: its one definition.

The packaging reads it (``pyproject.toml``: the distribution's version);
``inboxspec --version`` shows it (the root package re-exports it as
``inboxspec.__version__``); the reference adapter's ``start`` reply names it.
The inbox refresh reference hashes the installed distribution's version into its
worker pin, as the seed hashes its package's (``impl/inbox_refresh_version.py``:
``impl/`` may not import this folder), and that is this version once installed.
It lives here, not in the root package, because the adapter may not import the
root (``tests/test_import_graph.py``); and it is read as a constant, not from the
installed distribution's metadata (``importlib.metadata``), which cost each
start of the adapter about 15 ms of its 0.2 s.
"""

VERSION = "0.1.0"
