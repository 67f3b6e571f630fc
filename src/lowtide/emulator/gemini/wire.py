"""The Gemini API's bodies as the emulator answers them (the REST API's camelCase JSON), typed."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

__all__ = [
    "Candidate",
    "CountTokensResponse",
    "ErrorBody",
    "FinishReason",
    "GenerateContentResponse",
    "ModalityCount",
    "ModelInfo",
    "ModelList",
    "Part",
    "PromptFeedback",
    "ResponseContent",
    "RpcStatus",
    "SafetyRating",
    "UsageMetadata",
]

FinishReason = Literal[
    "STOP", "MAX_TOKENS", "SAFETY", "RECITATION", "LANGUAGE", "OTHER", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
    "MALFORMED_FUNCTION_CALL",
]  # fmt: skip


class FunctionCall(TypedDict):
    name: str
    args: dict[str, object]


class Part(TypedDict, total=False):
    text: str
    thought: bool
    thoughtSignature: str
    functionCall: FunctionCall


class ResponseContent(TypedDict):
    role: Literal["model"]
    parts: list[Part]


class SafetyRating(TypedDict):
    category: str
    probability: str
    blocked: NotRequired[bool]


class Candidate(TypedDict):
    content: NotRequired[ResponseContent]
    finishReason: NotRequired[FinishReason]
    index: int
    safetyRatings: NotRequired[list[SafetyRating]]


class ModalityCount(TypedDict):
    modality: str
    tokenCount: int


class UsageMetadata(TypedDict):
    promptTokenCount: int
    candidatesTokenCount: NotRequired[int]
    totalTokenCount: int
    cachedContentTokenCount: NotRequired[int]
    thoughtsTokenCount: NotRequired[int]
    promptTokensDetails: list[ModalityCount]
    cacheTokensDetails: NotRequired[list[ModalityCount]]


class PromptFeedback(TypedDict):
    blockReason: str
    safetyRatings: list[SafetyRating]


class GenerateContentResponse(TypedDict):
    candidates: NotRequired[list[Candidate]]
    promptFeedback: NotRequired[PromptFeedback]
    usageMetadata: UsageMetadata
    modelVersion: str
    responseId: str


class CountTokensResponse(TypedDict):
    totalTokens: int
    promptTokensDetails: list[ModalityCount]


class ModelInfo(TypedDict):
    name: str
    version: str
    displayName: str
    description: str
    inputTokenLimit: int
    outputTokenLimit: int
    supportedGenerationMethods: list[str]
    temperature: float
    maxTemperature: float
    topP: float
    topK: int
    thinking: bool


class ModelList(TypedDict):
    models: list[ModelInfo]
    nextPageToken: NotRequired[str]


class RpcStatus(TypedDict):
    """A `google.rpc.Status`: a batch row's error, a failed job's (`code` is the gRPC code, not the HTTP status)."""

    code: int
    message: str
    details: NotRequired[list[dict[str, object]]]


class ErrorBody(TypedDict):
    code: int
    message: str
    status: str
    details: NotRequired[list[dict[str, object]]]
