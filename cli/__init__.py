"""inboxspec: formal spec, models, reference implementation and conformance suite
for the coordination machines agent hosts run around their inboxes."""

# The version is defined once, where the reference adapter can read it too (conformance/version.py).
from inboxspec.conformance.version import VERSION as __version__

__all__ = ["__version__"]
