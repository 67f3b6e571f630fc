"""Live mode at the provider's rate limits: quotas shared per scope (`quota.py`, `scopes.py`), retries by error
class (`retries.py`), the call itself with its middleware and observers (`caller.py`), and the typed events they
report (`events.py`). Providers read their rate-limit headers into `reports.QuotaReport`."""
