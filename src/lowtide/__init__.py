"""lowtide: run an agent's model calls, and bulk LLM work, through provider batch APIs.

An actor whose configuration says `batch_processing: batch` gets its calls answered through its provider's batch API
(Anthropic, OpenAI, Azure OpenAI, Gemini, Bedrock, Mistral, Groq or Together: half the price, no stream-idle
timeouts, results within the provider's window) and receives the same `ActorResponse` a live call gives; a durable
ledger (SQLite by default, PostgreSQL, or memory) makes sure no request is paid for twice.

Providers are named in the configuration (`provider: openai`) and found through the registry (`default_registry()`,
the `lowtide.providers` entry points); only the Anthropic classes, `ClaudeProvider` and `ClaudeBatchProvider`, are
exported here, the others live in their folders (`lowtide.providers.openai.OpenAIBatchProvider`, ...). `Ledger` is the
SQLite store (`lowtide.ledger.sqlite`), `MemoryLedger` the memory one; `open_ledger(location)` opens any kind by its
location (a path, `sqlite:`, `postgresql://`, `memory:`). docs/architecture.md describes the pieces.
"""

import typing as _typing

from lowtide._version import __version__

if _typing.TYPE_CHECKING:
    from lowtide.actor import Actor
    from lowtide.agents import Agent, AgentContext, AgentHandle, agent
    from lowtide.batching.tickets import Ticket
    from lowtide.bulk import InputError, Job, RunProgress
    from lowtide.bulk.outputs.results import ItemResult, ItemStatus, RunResult
    from lowtide.bulk.planning.batches import RunPlan
    from lowtide.bulk.planning.live_plan import LivePlan
    from lowtide.bulk.running.runner import BulkRun
    from lowtide.calls.owners import spend_owner
    from lowtide.config.actors import ActorConfiguration, BatchProcessingMode, BatchSettings, TimeoutPolicy, load_actors
    from lowtide.core.clock import Clock, ManualClock, SystemClock, VirtualClock
    from lowtide.errors import (
        ActorClosedError,
        ActorError,
        AgentDivergedError,
        AgentError,
        AgentRunError,
        APIConnectionError,
        APIError,
        APITimeoutError,
        APIUnreachableError,
        AuthenticationError,
        BatchNotOutstanding,
        BatchRequestCanceled,
        BatchRequestError,
        BatchRequestErrored,
        BatchRequestExpired,
        BatchRequestUnreadable,
        BatchTimeoutError,
        BudgetExceededError,
        ConfigurationError,
        DeadlineExceededError,
        InternalError,
        InvalidRequestError,
        LedgerError,
        ModelDeprecationWarning,
        NotFoundError,
        OverloadedError,
        PermissionDeniedError,
        ProviderCapabilityError,
        ProviderNotFoundError,
        RateLimitError,
        ServerError,
        SpendCapExceededError,
        StreamInterruptedError,
        StructuredOutputError,
        UnstorableValueError,
    )
    from lowtide.ledger.memory import MemoryLedger
    from lowtide.ledger.sqlite import Ledger
    from lowtide.ledger.store import open_ledger
    from lowtide.provider import Outcome, Provider, ProviderOptions
    from lowtide.providers.anthropic import ClaudeBatchProvider, ClaudeProvider
    from lowtide.registry import ProviderRegistry, default_registry
    from lowtide.streaming import StreamEvent, TextDelta, ThinkingDelta, ToolCallDelta
    from lowtide.types import (
        ActorRequest,
        ActorResponse,
        ChatMessage,
        Cost,
        ProviderIds,
        TextContent,
        ThinkingContent,
        ToolSpec,
        ToolUseContent,
        Usage,
    )

# Every public name but the version is imported when first asked for (`from lowtide import Actor` asks), so that
# `import lowtide`, and any of its modules (which runs this file first: the `lowtide` command, a provider plugin),
# costs only what it uses: an OpenAI user need not load the Anthropic SDK (about 25 MiB and a second of CPU), nor a
# program that only calls `Actor.run` the bulk runs, nor `lowtide --help` the engines, pydantic's models and the
# ledger's stores (0.6 s of CPU before it printed a line, when they were imported here).
_LAZY = {
    "APIConnectionError": "lowtide.errors",
    "APIError": "lowtide.errors",
    "APITimeoutError": "lowtide.errors",
    "APIUnreachableError": "lowtide.errors",
    "Actor": "lowtide.actor",
    "ActorConfiguration": "lowtide.config.actors",
    "ActorError": "lowtide.errors",
    "ActorRequest": "lowtide.types",
    "ActorResponse": "lowtide.types",
    "Agent": "lowtide.agents",
    "AgentContext": "lowtide.agents",
    "AgentDivergedError": "lowtide.errors",
    "AgentError": "lowtide.errors",
    "AgentHandle": "lowtide.agents",
    "AgentRunError": "lowtide.errors",
    "AuthenticationError": "lowtide.errors",
    "ActorClosedError": "lowtide.errors",
    "BatchNotOutstanding": "lowtide.errors",
    "BatchProcessingMode": "lowtide.config.actors",
    "BatchRequestCanceled": "lowtide.errors",
    "BatchRequestError": "lowtide.errors",
    "BatchRequestErrored": "lowtide.errors",
    "BatchRequestExpired": "lowtide.errors",
    "BatchRequestUnreadable": "lowtide.errors",
    "BatchSettings": "lowtide.config.actors",
    "BatchTimeoutError": "lowtide.errors",
    "BudgetExceededError": "lowtide.errors",
    "BulkRun": "lowtide.bulk.running.runner",
    "ChatMessage": "lowtide.types",
    "ClaudeBatchProvider": "lowtide.providers.anthropic",
    "ClaudeProvider": "lowtide.providers.anthropic",
    "Clock": "lowtide.core.clock",
    "ConfigurationError": "lowtide.errors",
    "Cost": "lowtide.types",
    "DeadlineExceededError": "lowtide.errors",
    "InputError": "lowtide.bulk",
    "InternalError": "lowtide.errors",
    "InvalidRequestError": "lowtide.errors",
    "ItemResult": "lowtide.bulk.outputs.results",
    "ItemStatus": "lowtide.bulk.outputs.results",
    "Job": "lowtide.bulk",
    "Ledger": "lowtide.ledger.sqlite",
    "LedgerError": "lowtide.errors",
    "LivePlan": "lowtide.bulk.planning.live_plan",
    "ManualClock": "lowtide.core.clock",
    "MemoryLedger": "lowtide.ledger.memory",
    "ModelDeprecationWarning": "lowtide.errors",
    "NotFoundError": "lowtide.errors",
    "Outcome": "lowtide.provider",
    "OverloadedError": "lowtide.errors",
    "PermissionDeniedError": "lowtide.errors",
    "Provider": "lowtide.provider",
    "ProviderCapabilityError": "lowtide.errors",
    "ProviderIds": "lowtide.types",
    "ProviderNotFoundError": "lowtide.errors",
    "ProviderOptions": "lowtide.provider",
    "ProviderRegistry": "lowtide.registry",
    "RateLimitError": "lowtide.errors",
    "RunPlan": "lowtide.bulk.planning.batches",
    "RunProgress": "lowtide.bulk",
    "RunResult": "lowtide.bulk.outputs.results",
    "ServerError": "lowtide.errors",
    "SpendCapExceededError": "lowtide.errors",
    "StreamEvent": "lowtide.streaming",
    "StreamInterruptedError": "lowtide.errors",
    "StructuredOutputError": "lowtide.errors",
    "UnstorableValueError": "lowtide.errors",
    "SystemClock": "lowtide.core.clock",
    "TextContent": "lowtide.types",
    "TextDelta": "lowtide.streaming",
    "ThinkingContent": "lowtide.types",
    "ThinkingDelta": "lowtide.streaming",
    "Ticket": "lowtide.batching.tickets",
    "TimeoutPolicy": "lowtide.config.actors",
    "ToolCallDelta": "lowtide.streaming",
    "ToolSpec": "lowtide.types",
    "ToolUseContent": "lowtide.types",
    "Usage": "lowtide.types",
    "VirtualClock": "lowtide.core.clock",
    "agent": "lowtide.agents",
    "default_registry": "lowtide.registry",
    "load_actors": "lowtide.config.actors",
    "open_ledger": "lowtide.ledger.store",
    "spend_owner": "lowtide.calls.owners",
}


def __getattr__(name: str) -> object:
    import importlib.util

    module = _LAZY.get(name)
    if module is None:
        # A subpackage (`lowtide.ledger` after `import lowtide` alone), as when this file imported them all.
        if not name.startswith("_") and importlib.util.find_spec(f"lowtide.{name}") is not None:
            return importlib.import_module(f"lowtide.{name}")
        raise AttributeError(f"module 'lowtide' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once: the next lookup finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "APIUnreachableError",
    "Actor",
    "ActorClosedError",
    "ActorConfiguration",
    "ActorError",
    "ActorRequest",
    "ActorResponse",
    "Agent",
    "AgentContext",
    "AgentDivergedError",
    "AgentError",
    "AgentHandle",
    "AgentRunError",
    "AuthenticationError",
    "BatchNotOutstanding",
    "BatchProcessingMode",
    "BatchRequestCanceled",
    "BatchRequestError",
    "BatchRequestErrored",
    "BatchRequestExpired",
    "BatchRequestUnreadable",
    "BatchSettings",
    "BatchTimeoutError",
    "BudgetExceededError",
    "BulkRun",
    "ChatMessage",
    "ClaudeBatchProvider",
    "ClaudeProvider",
    "Clock",
    "ConfigurationError",
    "Cost",
    "DeadlineExceededError",
    "InputError",
    "InternalError",
    "InvalidRequestError",
    "ItemResult",
    "ItemStatus",
    "Job",
    "Ledger",
    "LedgerError",
    "LivePlan",
    "ManualClock",
    "MemoryLedger",
    "ModelDeprecationWarning",
    "NotFoundError",
    "Outcome",
    "OverloadedError",
    "PermissionDeniedError",
    "Provider",
    "ProviderCapabilityError",
    "ProviderIds",
    "ProviderNotFoundError",
    "ProviderOptions",
    "ProviderRegistry",
    "RateLimitError",
    "RunPlan",
    "RunProgress",
    "RunResult",
    "ServerError",
    "SpendCapExceededError",
    "StreamEvent",
    "StreamInterruptedError",
    "StructuredOutputError",
    "SystemClock",
    "TextContent",
    "TextDelta",
    "ThinkingContent",
    "ThinkingDelta",
    "Ticket",
    "TimeoutPolicy",
    "ToolCallDelta",
    "ToolSpec",
    "ToolUseContent",
    "UnstorableValueError",
    "Usage",
    "VirtualClock",
    "__version__",
    "agent",
    "default_registry",
    "load_actors",
    "open_ledger",
    "spend_owner",
]
