"""Approval before side effects: rules the user owns (the policy comes with its issue)."""
