"""Desktop notifications with a fallback that always succeeds."""
