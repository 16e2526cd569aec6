"""Dialogs of the window (each titled, opened with open(), never exec())."""
