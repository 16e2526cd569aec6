"""The bundle's executable: ``mooring`` (every command, the window, ``mooring demo-server``)."""

import os
import sys

from mooring.adapters.launcher import restore_host_environment
from mooring.launch import main

if getattr(sys, "frozen", False):
    restore_host_environment(os.environ)
raise SystemExit(main())
