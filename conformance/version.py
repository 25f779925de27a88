"""The distribution's version: its one definition.

Three places report it: the packaging (``pyproject.toml`` reads it as the
distribution's version), ``inboxspec --version`` (the root package re-exports
it as ``inboxspec.__version__``) and the reference adapter's ``start`` reply.
It lives here, not in the root package, because the adapter may not import the
root (``tests/test_import_graph.py``); and it is read as a constant, not from the
installed distribution's metadata, which cost each adapter start about 40 ms of
its 0.2 s (``importlib.metadata``).
"""

VERSION = "0.1.0"
