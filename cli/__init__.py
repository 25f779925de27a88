"""inboxspec: formal spec, models, reference implementation and conformance suite
for the coordination machines agent hosts run around their inboxes."""

__version__ = "0.1.0"
