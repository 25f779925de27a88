"""Model checking: the compiled chart view, the explorer, findings and generated cases."""
