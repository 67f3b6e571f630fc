"""What a provider author imports: the one public face of lowtide's provider contract.

A provider is a `Provider` class registered by name and mode with a `ProviderRegistry` (from `lowtide`), through the
`lowtide.providers` entry-point group (`register(registry)`; a `Registration` says it as data). A batch provider names
its `codec` (a `BatchCodec`: requests to its API's bodies and result lines to outcomes, as pure functions) and returns
its `BatchBackend` (the API calls) from `batch_backend()`; the durable engine then gives it the ledger, keys,
coalescing, exactly-once create, park and resume, budgets and bulk runs. Its rules are its own, handed to the registry
as data: the check of its parameters (`register_parameters`, `ParameterCheck`), how its API reports usage for pricing
(`register_pricing`, `UsageShape`), what it takes as a custom id a user gives (`register_custom_ids`, `CustomIdRule`);
its errors are mapped by `translating` (`SdkErrors`), its result lines say for themselves whether a
failed request may be retried (`BatchRequestErrored(retryable=...)`, from `lowtide`).

The request and answer types, the error tree, the clock and the modes come from `lowtide` itself. Everything here is
documented where it is defined; `lowtide.testing.FakeBatchProvider` is a complete minimal batch provider written
against this face alone.
"""

from lowtide.batching.backend import (
    NO_STEPS,
    BatchBackend,
    BatchCodec,
    BatchLimits,
    Counts,
    CreateSteps,
    CustomIdParts,
    Phase,
    RemoteBatch,
    ResultLine,
    UnreadableLine,
    credential_of,
)
from lowtide.batching.lines import (
    FileReader,
    feed_lines,
    file_reader,
    read_files,
    read_line,
    split_lines,
)
from lowtide.batching.oneshot import OneBatchCalls, run_batch
from lowtide.batching.polling import wait_until_ended
from lowtide.batching.prompt_caching import CachePrefix, PromptCaching
from lowtide.batching.rebuild_reads import first_custom_id_in, first_line_reader, input_lines, read_input
from lowtide.batching.retrying import retrying
from lowtide.batching.token_priced import TokenPricedCodec, sent_tokens
from lowtide.config.endpoints import check_api_key, check_base_url, unreachable
from lowtide.core.custom_ids import HASHED, CustomIdRule, ledger_custom_id, parts_of_ledger_custom_id
from lowtide.core.exact_json import read_exactly
from lowtide.core.json_types import JSONObject, JSONValue, json_count, json_object, json_objects
from lowtide.core.parameters import (
    LazyCheck,
    ParameterCheck,
    Parameters,
    check_ranges,
    refuse_fields,
    with_extra_params,
)
from lowtide.cost.priced import PriceCache, Priced
from lowtide.cost.pricing import (
    PROBE_TOKENS,
    UsageShape,
    cost_of,
    cost_range,
    estimate_input_tokens,
    neutral_probes,
    worst_case_cost,
)
from lowtide.live.reports import Budget, LimitListener, LimitWatchers, QuotaReport, header_int, header_number
from lowtide.messages.answers import Answer, Outcome, Settled, TextAnswer, answer_of, response_of, text_alone
from lowtide.messages.content import (
    ContentRules,
    FilePart,
    ImagePart,
    Part,
    Piece,
    TextPart,
    ToolCall,
    ToolResult,
    first_image,
    pieces_of,
    system_text,
)
from lowtide.messages.limits import NO_LIMITS, InputLimits, body_json, byte_size, check_input
from lowtide.messages.relay import (
    Block,
    BlockOpened,
    BlockPiece,
    MessageOf,
    Relay,
    RelayStep,
    StreamFinished,
    ThinkingRelay,
)
from lowtide.messages.structured import json_text, parse_response, parsed_outcome
from lowtide.messages.wire import REFUSAL_TYPES, LiveWire, Refusal, ServedCall, Wire
from lowtide.provider import Provider, ProviderOptions
from lowtide.providers.asked import AskedOnce
from lowtide.providers.chat_choices import first_choice, stop_reason
from lowtide.providers.envelope_codec import EnvelopeCodec, ended_outcome, unreadable_outcome
from lowtide.providers.lazy import LazyProvider
from lowtide.providers.registration import Registration
from lowtide.providers.sdk import split_for_sdk
from lowtide.providers.sdk_backend import EndedAs, SdkBatchBackend, ended_counts
from lowtide.providers.sdk_errors import (
    SdkErrors,
    StatusError,
    api_error_class,
    api_error_from_status,
    seconds_of,
    translating,
)

__all__ = [
    "HASHED",
    "NO_LIMITS",
    "NO_STEPS",
    "PROBE_TOKENS",
    "REFUSAL_TYPES",
    "Answer",
    "AskedOnce",
    "BatchBackend",
    "BatchCodec",
    "BatchLimits",
    "Block",
    "BlockOpened",
    "BlockPiece",
    "Budget",
    "CachePrefix",
    "ContentRules",
    "Counts",
    "CreateSteps",
    "CustomIdParts",
    "CustomIdRule",
    "EndedAs",
    "EnvelopeCodec",
    "FilePart",
    "FileReader",
    "ImagePart",
    "InputLimits",
    "JSONObject",
    "JSONValue",
    "LazyCheck",
    "LazyProvider",
    "LimitListener",
    "LimitWatchers",
    "LiveWire",
    "MessageOf",
    "OneBatchCalls",
    "Outcome",
    "ParameterCheck",
    "Parameters",
    "Part",
    "Phase",
    "Piece",
    "PriceCache",
    "Priced",
    "PromptCaching",
    "Provider",
    "ProviderOptions",
    "QuotaReport",
    "Refusal",
    "Registration",
    "Relay",
    "RelayStep",
    "RemoteBatch",
    "ResultLine",
    "SdkBatchBackend",
    "SdkErrors",
    "ServedCall",
    "Settled",
    "StatusError",
    "StreamFinished",
    "TextAnswer",
    "TextPart",
    "ThinkingRelay",
    "TokenPricedCodec",
    "ToolCall",
    "ToolResult",
    "UnreadableLine",
    "UsageShape",
    "Wire",
    "answer_of",
    "api_error_class",
    "api_error_from_status",
    "body_json",
    "byte_size",
    "check_api_key",
    "check_base_url",
    "check_input",
    "check_ranges",
    "cost_of",
    "cost_range",
    "credential_of",
    "ended_counts",
    "ended_outcome",
    "estimate_input_tokens",
    "feed_lines",
    "file_reader",
    "first_choice",
    "first_custom_id_in",
    "first_image",
    "first_line_reader",
    "header_int",
    "header_number",
    "input_lines",
    "json_count",
    "json_object",
    "json_objects",
    "json_text",
    "ledger_custom_id",
    "neutral_probes",
    "parse_response",
    "parsed_outcome",
    "parts_of_ledger_custom_id",
    "pieces_of",
    "read_exactly",
    "read_files",
    "read_input",
    "read_line",
    "refuse_fields",
    "response_of",
    "retrying",
    "run_batch",
    "seconds_of",
    "sent_tokens",
    "split_for_sdk",
    "split_lines",
    "stop_reason",
    "system_text",
    "text_alone",
    "translating",
    "unreachable",
    "unreadable_outcome",
    "wait_until_ended",
    "with_extra_params",
    "worst_case_cost",
]
