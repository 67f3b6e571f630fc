"""Whether an endpoint serves the model a request names, asked before the request is recorded or sent, as every
provider with a models endpoint asks it: once per model, endpoint and key in a process (however many calls ask at
once), an unknown name refused with a `ConfigurationError` naming the closest names the endpoint lists ("did you
mean"). The endpoint has the last word only when it can give it: when it cannot be reached the check is skipped for
the rest of the process, when it answers another error for that call (either logged once per endpoint), and the
request goes on. A rejected key (`AuthenticationError`) is raised as the call's own error.

A provider hands over its two questions, each raising lowtide's errors (its SDK's translated): `lookup(model)`,
whether the endpoint serves `model` (a `NotFoundError` says it does not), and `listing()`, the names it lists.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Awaitable, Callable, Sequence

from lowtide.errors import APIConnectionError, APIError, AuthenticationError, ConfigurationError, NotFoundError
from lowtide.providers.asked import AskedOnce

__all__ = ["ModelNames", "did_you_mean", "forget_model_names", "model_names"]

log = logging.getLogger(__name__)

_SUGGESTIONS = 3


class ModelNames:
    """What one endpoint, asked with one key, said of model names: kept for the life of the process."""

    def __init__(self, provider: str, endpoint: str) -> None:
        self.provider = provider
        self.endpoint = endpoint
        self._served: AskedOnce[str, bool | None] = AskedOnce()
        self._names: list[str] | None = None
        self._reachable = True
        self._said = False

    async def check(
        self,
        model: str,
        *,
        listing: Callable[[], Awaitable[Sequence[str]]],
        lookup: Callable[[str], Awaitable[object]] | None = None,
        hint: str = "",
    ) -> None:
        """Refuse `model` when the endpoint says it serves no such model (`lookup` raises `NotFoundError`; without a
        `lookup`, its list lacks the name), naming the closest it lists; `hint` ends the refusal."""
        if not self._reachable:
            return

        async def ask() -> bool | None:
            try:
                if lookup is None:
                    return model in await self._list(listing)
                await lookup(model)
            except NotFoundError:
                return False
            except AuthenticationError:
                raise
            except APIConnectionError as exc:
                self._reachable = False
                self._skipped(f"cannot be reached ({type(exc).__name__})")
                return None
            except APIError as exc:
                self._skipped(f"answered {exc.status_code}")
                return None
            return True

        if await self._served.ask(model, ask, kept=lambda served: served is not None) is False:
            try:
                names = await self._list(listing)
            except APIError:
                names = []
            where = f"{self.provider} at {self.endpoint} has no model {model!r}"
            raise did_you_mean(model, names, where=where, hint=hint)

    async def _list(self, listing: Callable[[], Awaitable[Sequence[str]]]) -> list[str]:
        if self._names is None:
            self._names = sorted(set(await listing()))
        return self._names

    def _skipped(self, why: str) -> None:
        if not self._said:
            self._said = True
            log.warning("The models endpoint of %s %s: model names are not checked before sending.", self.endpoint, why)


def did_you_mean(
    model: str,
    names: Sequence[str],
    *,
    where: str,
    hint: str = "",
    listed: str = "its models list names the models it serves",
) -> ConfigurationError:
    """The refusal of an unknown `model` (`where` says whose: "Groq at https://... has no model 'x'"), naming the
    closest of `names`, or, with none near, pointing to the list (`listed`: where it is); `hint` (a sentence) ends
    it."""
    close = difflib.get_close_matches(model, list(names), n=_SUGGESTIONS)
    more = f" {hint}" if hint else ""
    if not close:
        return ConfigurationError(f"model: {where} ({listed}).{more}", field="model")
    quoted = [repr(name) for name in close]
    options = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return ConfigurationError(f"model: {where}. Did you mean {options}?{more}", field="model")


_KNOWN: dict[tuple[str, str, str], ModelNames] = {}


def model_names(provider: str, endpoint: str, credential: str) -> ModelNames:
    """The `ModelNames` of `provider`'s `endpoint` with the key `credential` names (`credential_of`), shared by
    every client of the process that asks there."""
    key = (provider, endpoint, credential)
    known = _KNOWN.get(key)
    if known is None:
        known = _KNOWN[key] = ModelNames(provider, endpoint)
    return known


def forget_model_names() -> None:
    """Forget what endpoints said, as a new process would (for tests)."""
    _KNOWN.clear()
