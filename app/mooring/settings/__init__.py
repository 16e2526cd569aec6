"""Where Mooring keeps its files, and the settings the user can change."""
