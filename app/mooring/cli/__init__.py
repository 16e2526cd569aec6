"""The headless command line: ``mooring <command>`` (scripts, servers without a desktop, tests)."""
