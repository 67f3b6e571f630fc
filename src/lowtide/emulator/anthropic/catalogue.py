"""The models the emulator serves, as the Models API lists them (`anthropic.types.ModelInfo`), and the answer to
"may a request name this model?".

The catalogue holds the Claude models the installed SDK names (its `Model` literal) as of November 2026, with the
lifecycle its `DEPRECATED_MODELS` table gives: Claude Sonnet 4.5 deprecated and retiring on 2026-11-30, the Mythos
preview retired on 2026-06-30. Limits and release days are those of Anthropic's model pages; where a page gives no
day, the day of the model's first announcement. Capabilities are the same on every model, because the emulator
answers every feature on every model. Tests add names of their own with `Emulator(extra_models=...)`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from lowtide.emulator.anthropic.batches import paginate
from lowtide.emulator.core.errors import invalid_request, not_found
from lowtide.emulator.core.jsonutil import JsonObject

__all__ = [
    "CATALOGUE",
    "LIFECYCLES",
    "MINIMUM_CACHEABLE_TOKENS",
    "ModelCatalogue",
    "ModelEntry",
    "minimum_cacheable_tokens",
]

Lifecycle = Literal["active", "deprecated", "retired"]
LIFECYCLES: tuple[Lifecycle, ...] = ("active", "deprecated", "retired")
_LISTED_BY_DEFAULT: tuple[Lifecycle, ...] = ("active", "deprecated")
_EPOCH = date(1970, 1, 1)

# The fewest tokens a cached prefix needs, as the prompt caching guide lists them by model family: a model id (dated
# or not) starting with a key; any other model caches from 1,024 tokens.
MINIMUM_CACHEABLE_TOKENS: Mapping[str, int] = {
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-sonnet-4-6": 2048,
    "claude-3-5-haiku": 2048,
    "claude-3-haiku": 2048,
}
_DEFAULT_MINIMUM = 1024


def minimum_cacheable_tokens(model: str) -> int:
    """The fewest tokens a prefix needs before `model` caches it."""
    return next(
        (minimum for family, minimum in MINIMUM_CACHEABLE_TOKENS.items() if model.startswith(family)), _DEFAULT_MINIMUM
    )


@dataclass(frozen=True)
class ModelEntry:
    """One model of the catalogue. `aliases` are other names the API resolves to this model's id."""

    id: str
    display_name: str
    created: date
    max_tokens: int
    max_input_tokens: int = 1_000_000
    line: str | None = None
    aliases: tuple[str, ...] = ()
    lifecycle: Lifecycle = "active"
    deprecated: date | None = None
    retires: date | None = None

    def render(self) -> JsonObject:
        """The `ModelInfo` object (the beta `BetaModelInfo` has the same required fields)."""
        return {
            "id": self.id,
            "type": "model",
            "display_name": self.display_name,
            "created_at": _day(self.created),
            "lifecycle": self.lifecycle,
            "deprecated_at": _day(self.deprecated) if self.deprecated is not None else None,
            "retires_at": _day(self.retires) if self.retires is not None else None,
            "line": self.line,
            "max_input_tokens": self.max_input_tokens,
            "max_tokens": self.max_tokens,
            "capabilities": _CAPABILITIES,
        }


def _model(
    model_id: str,
    name: str,
    created: str,
    line: str,
    max_tokens: int = 128_000,
    *,
    max_input_tokens: int = 1_000_000,
    aliases: tuple[str, ...] = (),
    lifecycle: Lifecycle = "active",
    deprecated: str | None = None,
    retires: str | None = None,
) -> ModelEntry:
    return ModelEntry(
        model_id,
        name,
        date.fromisoformat(created),
        max_tokens,
        max_input_tokens=max_input_tokens,
        line=line,
        aliases=aliases,
        lifecycle=lifecycle,
        deprecated=date.fromisoformat(deprecated) if deprecated is not None else None,
        retires=date.fromisoformat(retires) if retires is not None else None,
    )


# Newest first, as the API lists them.
CATALOGUE: tuple[ModelEntry, ...] = (
    _model("claude-fable-5-2", "Claude Fable 5.2", "2026-11-09", "fable"),
    _model("claude-mythos-5-2", "Claude Mythos 5.2", "2026-11-09", "mythos"),
    _model("claude-haiku-5-5", "Claude Haiku 5.5", "2026-10-07", "haiku"),
    _model("claude-sonnet-5-5", "Claude Sonnet 5.5", "2026-09-24", "sonnet"),
    _model("claude-fable-5-1", "Claude Fable 5.1", "2026-09-24", "fable"),
    _model("claude-opus-5-5", "Claude Opus 5.5", "2026-09-24", "opus"),
    _model("claude-mythos-5-1", "Claude Mythos 5.1", "2026-09-24", "mythos"),
    _model("claude-opus-5", "Claude Opus 5", "2026-07-24", "opus"),
    _model("claude-sonnet-5", "Claude Sonnet 5", "2026-06-30", "sonnet"),
    _model("claude-fable-5", "Claude Fable 5", "2026-06-09", "fable"),
    _model("claude-mythos-5", "Claude Mythos 5", "2026-06-09", "mythos"),
    _model("claude-opus-4-8", "Claude Opus 4.8", "2026-05-28", "opus"),
    _model("claude-opus-4-7", "Claude Opus 4.7", "2026-04-16", "opus"),
    # The SDK gives only the preview's retirement; its release and deprecation days here are placeholders.
    _model(
        "claude-mythos-preview", "Claude Mythos Preview", "2026-04-07", "mythos",
        lifecycle="retired", deprecated="2026-04-30", retires="2026-06-30",
    ),
    _model("claude-sonnet-4-6", "Claude Sonnet 4.6", "2026-02-17", "sonnet"),
    _model("claude-opus-4-6", "Claude Opus 4.6", "2026-02-05", "opus"),
    # Deprecated at least 60 days before retirement, as Anthropic's policy gives; the SDK names only the retirement.
    _model(
        "claude-opus-4-5-20251101", "Claude Opus 4.5", "2025-11-24", "opus", 64_000,
        aliases=("claude-opus-4-5",), lifecycle="deprecated", deprecated="2026-11-23", retires="2027-01-22",
        max_input_tokens=200_000,
    ),
    _model("claude-haiku-4-5-20251001", "Claude Haiku 4.5", "2025-10-15", "haiku", 64_000,
           aliases=("claude-haiku-4-5",), max_input_tokens=200_000),
    _model(
        "claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "2025-09-29", "sonnet", 64_000,
        aliases=("claude-sonnet-4-5",), lifecycle="deprecated", deprecated="2026-09-30", retires="2026-11-30",
        max_input_tokens=200_000,
    ),
)  # fmt: skip


class ModelCatalogue:
    """The catalogue plus `extra` names (served as active models, released at the epoch as the API shows an
    unknown release date), found by id or alias."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        entries = list(CATALOGUE)
        names = {name: entry for entry in entries for name in (entry.id, *entry.aliases)}
        for name in extra:
            known = names.get(name)
            if known is not None and known.lifecycle != "retired":
                continue
            entry = ModelEntry(name, name, _EPOCH, 128_000)
            entries = [other for other in entries if other is not known]
            entries.append(entry)
            names[name] = entry
        self._entries = entries
        self._names = names

    def find(self, name: str) -> ModelEntry | None:
        """The model `name` (an id or an alias) names, retired ones included, or None."""
        return self._names.get(name)

    def resolved(self, name: str) -> str:
        """The id the API names in an answer to a request naming `name`: the dated id of an alias, else `name`."""
        entry = self._names.get(name)
        return entry.id if entry is not None else name

    def serves(self, name: str) -> ModelEntry | None:
        """The model a request naming `name` runs on: None for an unknown or retired one."""
        entry = self._names.get(name)
        return entry if entry is not None and entry.lifecycle != "retired" else None

    def retrieve(self, name: str) -> JsonObject:
        """`GET /v1/models/{model_id}`: a retired model is still described (its lifecycle says so)."""
        entry = self.find(name)
        if entry is None:
            raise not_found(f"model: {name}")
        return entry.render()

    def page(self, *, limit: int, after_id: str | None, before_id: str | None, lifecycle: Sequence[str]) -> JsonObject:
        """`GET /v1/models`: one page, newest first, of the models in `lifecycle` (active and deprecated when
        none is asked for)."""
        if after_id is not None and before_id is not None:
            raise invalid_request("Only one of after_id and before_id may be given.")
        unknown = [stage for stage in lifecycle if stage not in LIFECYCLES]
        if unknown:
            raise invalid_request(
                f"lifecycle: Input should be 'active', 'deprecated' or 'retired' (got {unknown[0]!r})"
            )
        if len(lifecycle) > len(LIFECYCLES):
            raise invalid_request(f"lifecycle: List should have at most {len(LIFECYCLES)} items")
        wanted = set(lifecycle or _LISTED_BY_DEFAULT)
        listed = sorted(
            (entry for entry in self._entries if entry.lifecycle in wanted), key=lambda e: e.created, reverse=True
        )
        ids = [entry.id for entry in listed]
        for name, cursor in (("after_id", after_id), ("before_id", before_id)):
            if cursor is not None and cursor not in ids:
                raise invalid_request(f"{name}: no model with id {cursor} in this list")
        page = paginate(ids, limit=limit, after_id=after_id, before_id=before_id)
        by_id = {entry.id: entry for entry in listed}
        return {
            "data": [by_id[model_id].render() for model_id in page.ids],
            "has_more": page.has_more,
            "first_id": page.ids[0] if page.ids else None,
            "last_id": page.ids[-1] if page.ids else None,
        }

    def max_tokens(self, name: str) -> int | None:
        entry = self._names.get(name)
        return entry.max_tokens if entry is not None else None

    def check_window(self, name: str, tokens: int) -> None:
        """Refuse a prompt of `tokens` input tokens over the context window of the model `name` names."""
        entry = self._names.get(name)
        if entry is not None and tokens > entry.max_input_tokens:
            raise invalid_request(f"prompt is too long: {tokens} tokens > {entry.max_input_tokens} maximum")


def _day(day: date) -> str:
    return f"{day.isoformat()}T00:00:00Z"


def _supported(supported: bool = True) -> JsonObject:
    return {"supported": supported}


_CAPABILITIES: JsonObject = {
    "batch": _supported(),
    "citations": _supported(),
    "code_execution": _supported(),
    "context_management": {
        "supported": True,
        "clear_thinking_20251015": _supported(),
        "clear_tool_uses_20250919": _supported(),
        "compact_20260112": _supported(),
    },
    "effort": {
        "supported": True,
        "low": _supported(),
        "medium": _supported(),
        "high": _supported(),
        "xhigh": _supported(),
        "max": _supported(),
    },
    "image_input": _supported(),
    "pdf_input": _supported(),
    "server_tools": {"supported": True, "code_execution": _supported(), "web_search": _supported()},
    "structured_outputs": _supported(),
    "thinking": {
        "supported": True,
        "types": {
            "adaptive": _supported(),
            "between_tools": _supported(),
            "disabled": _supported(),
            "enabled": _supported(),
        },
    },
}
