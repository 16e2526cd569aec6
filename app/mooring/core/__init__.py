"""The domain core: value objects, the task state machine and pure rules (stdlib only)."""
