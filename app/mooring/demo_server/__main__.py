"""``python -m mooring.demo_server``: run the demo server (see ``--help``)."""

from mooring.demo_server.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
