"""A bulk run as the ledger records it: its items' keys, its identity, its items sorted for a go, its resume, retry and
status."""
