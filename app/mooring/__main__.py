"""``python -m mooring``."""

from mooring.launch import main

raise SystemExit(main())
