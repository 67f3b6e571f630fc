"""Where a bulk run stands while it goes: its progress, the ways to show it, and its ETA."""
