"""The durable task ledger: records, local states, poll scheduling and reconciliation rules."""
