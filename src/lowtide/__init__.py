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
from lowtide.actor import Actor
from lowtide.batching.tickets import Ticket
from lowtide.config.actors import ActorConfiguration, BatchProcessingMode, BatchSettings, TimeoutPolicy, load_actors
from lowtide.core.clock import Clock, ManualClock, SystemClock, VirtualClock
from lowtide.errors import (
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
    StructuredOutputError,
    UnstorableValueError,
)
from lowtide.ledger.memory import MemoryLedger
from lowtide.ledger.sqlite import Ledger
from lowtide.ledger.store import open_ledger
from lowtide.provider import Outcome, Provider, ProviderOptions
from lowtide.registry import ProviderRegistry, default_registry
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

if _typing.TYPE_CHECKING:
    from lowtide.agents import Agent, AgentContext, AgentHandle, agent
    from lowtide.bulk import InputError, Job, RunProgress
    from lowtide.bulk.outputs.results import ItemResult, ItemStatus, RunResult
    from lowtide.bulk.planning.batches import RunPlan
    from lowtide.bulk.planning.live_plan import LivePlan
    from lowtide.bulk.running.runner import BulkRun
    from lowtide.providers.anthropic import ClaudeBatchProvider, ClaudeProvider

# The providers' classes are imported when first asked for: an OpenAI user need not load the Anthropic SDK (about
# 25 MiB and a second of CPU), nor an Anthropic user the OpenAI one. So are the bulk runs' (`lowtide.bulk`, which
# `Actor.bulk` and `Actor.map` import when called): a program that only calls `Actor.run` never loads them.
_LAZY = {
    "Agent": "lowtide.agents",
    "AgentContext": "lowtide.agents",
    "AgentHandle": "lowtide.agents",
    "BulkRun": "lowtide.bulk.running.runner",
    "ClaudeBatchProvider": "lowtide.providers.anthropic",
    "ClaudeProvider": "lowtide.providers.anthropic",
    "InputError": "lowtide.bulk",
    "ItemResult": "lowtide.bulk.outputs.results",
    "ItemStatus": "lowtide.bulk.outputs.results",
    "Job": "lowtide.bulk",
    "LivePlan": "lowtide.bulk.planning.live_plan",
    "RunPlan": "lowtide.bulk.planning.batches",
    "RunProgress": "lowtide.bulk",
    "RunResult": "lowtide.bulk.outputs.results",
    "agent": "lowtide.agents",
}


def __getattr__(name: str) -> object:
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'lowtide' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "APIUnreachableError",
    "Actor",
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
    "StructuredOutputError",
    "SystemClock",
    "TextContent",
    "ThinkingContent",
    "Ticket",
    "TimeoutPolicy",
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
]
