"""The quotas of a process: one per scope (a provider's credentials at one endpoint) and event loop, so that every
actor calling with the same key shares one set of limits, however many actors there are."""

from __future__ import annotations

import asyncio
import weakref

from lowtide.config.actors import LiveSettings
from lowtide.core.clock import Clock
from lowtide.ledger.quota_records import QuotaStore
from lowtide.live.quota import Quota, QuotaLimits

__all__ = ["provider_scope", "quota_for", "withdraw_store"]

_QUOTAS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, Quota]] = weakref.WeakKeyDictionary()


def quota_for(
    provider: str, scope: str, settings: LiveSettings, clock: Clock, store: QuotaStore | None = None
) -> Quota:
    """The running loop's quota for `provider`'s `scope` (`Provider.quota_scope`), made on first use with `settings`
    and `store` (None: this process alone). The first actor's limits stand, and its store until it closes (a later
    actor's `store` is offered to take over: `Quota.offer`); what the API's headers say applies to all."""
    scope = provider_scope(provider, scope)
    quotas = _QUOTAS.setdefault(asyncio.get_running_loop(), {})
    quota = quotas.get(scope)
    if quota is None:
        limits = QuotaLimits(
            max_concurrency=settings.max_concurrency,
            ramp_start=settings.ramp_start,
            ramp_step=settings.ramp_step,
            rpm=settings.rpm,
            input_tpm=settings.input_tpm,
            output_tpm=settings.output_tpm,
            tpm=settings.tpm,
        )
        quota = quotas[scope] = Quota(scope, limits, clock, store)
    elif store is not None:
        quota.offer(store)
    return quota


def withdraw_store(store: QuotaStore) -> None:
    """An actor closing in the running loop: `store` is used by no quota of it again (`Quota.withdraw`)."""
    for quota in _QUOTAS.get(asyncio.get_running_loop(), {}).values():
        quota.withdraw(store)


def provider_scope(provider: str, scope: str) -> str:
    """`scope` within `provider`'s name: two providers behind one address with one key (a gateway, `lowtide emulator`)
    never share a quota, whatever a provider's `quota_scope` says. The built-in providers' scopes begin with their
    name already, and keep the form the ledger's shared quotas were stored under."""
    return scope if scope.startswith(f"{provider}:") else f"{provider}:{scope}"
