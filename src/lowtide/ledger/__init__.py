"""The durable record of every batch and request (SQLite)."""
