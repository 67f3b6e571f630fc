"""Webhooks in: the providers' batch events received, verified by their provider, recorded once in the ledger, and the
batch's poller woken (`events`: what a provider hands over; `receiver`: the HTTP endpoint)."""
