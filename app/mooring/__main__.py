"""``python -m mooring``."""

from mooring.bootstrap import main

raise SystemExit(main())
