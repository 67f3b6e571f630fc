"""The durable batch engine, in its parts: gathering calls, submitting exactly once, polling and collecting, waiting."""
