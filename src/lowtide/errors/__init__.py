"""Every error lowtide raises, in one tree rooted at `ActorError`.

```
ActorError
├── ActorClosedError              a call on an actor that was closed (aclose, close, async with); nothing was sent
├── ConfigurationError            invalid actor configuration or call arguments; raised before anything is sent
│   ├── InputError                a bulk run's input file or jobs are wrong (lowtide.bulk); names file and line
│   ├── BatchNotOutstanding       cancel of a batch that has ended (or never existed at the API): nothing to cancel
│   └── UnstorableValueError      an agent step's argument or result that the journal cannot store (names the type)
├── ProviderNotFoundError         no provider registered under that name (with "did you mean ...?")
├── ProviderCapabilityError       the provider exists but cannot do what was asked (e.g. batch mode)
├── StructuredOutputError         the answer did not validate against the requested `response_model`
├── BudgetExceededError           a request's worst-case cost would cross a budget; nothing was sent
│   └── SpendCapExceededError     ... a team's or project's cap, all hosts of the ledger counted (names the cap)
├── APIError                      the provider's API refused or failed a call; keeps status code and request id
│   ├── AuthenticationError       401: missing or invalid API key
│   ├── PermissionDeniedError     403: the key may not do this
│   ├── NotFoundError             404: unknown model, batch or route
│   ├── InvalidRequestError       400, 413, 422 and other 4xx: the request itself is wrong
│   ├── RateLimitError            429: slow down; `retry_after` says for how long when the API said so
│   ├── OverloadedError           529: the API is overloaded; retry later
│   ├── ServerError               500 and other 5xx
│   ├── StreamInterruptedError    a live stream ended before its answer was whole: never a short answer
│   └── APIConnectionError        no answer: the connection dropped, or could not be made
│       ├── APITimeoutError       no answer in time
│       └── APIUnreachableError   no connection at all (refused, unknown host): nothing of that call was sent
├── LedgerError                   the ledger could not be read or written (disk full, locked, removed)
├── InternalError                 lowtide itself failed (a bug); the waiting calls get this, never a hang
├── AgentError                    a durable agent run could not go on (lowtide.agents); names the run
│   ├── AgentDivergedError        replay asked, at a position, for another turn or step than the journal holds
│   └── AgentRunError             the run awaited ended failed, stopped or in doubt (its state and error kept)
├── BatchTimeoutError             a batch did not end within `max_wait`; it was canceled or left running
├── DeadlineExceededError         a live call did not succeed before its deadline (`live.deadline`), over its attempts
└── BatchRequestError             one request of an ended batch did not succeed; its neighbours are unaffected
    ├── BatchRequestErrored       the API answered that request with an error (type and message kept)
    ├── BatchRequestUnreadable    the API's result line for that request could not be read; the raw line is kept
    ├── BatchRequestCanceled      the batch was canceled before that request was processed
    └── BatchRequestExpired       the batch hit its 24 hour limit before that request was processed
```

Errors never carry an API key: messages are built from the API's own error text, ids and numbers only.

One warning, not an error: `ModelDeprecationWarning` (a `FutureWarning`, shown by default), once per model in a
process, when a call names a model its provider has deprecated.
"""

from __future__ import annotations

from lowtide.errors.api import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    APIUnreachableError,
    AuthenticationError,
    DeadlineExceededError,
    InvalidRequestError,
    NotFoundError,
    OverloadedError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from lowtide.errors.batches import (
    BatchRequestCanceled,
    BatchRequestError,
    BatchRequestErrored,
    BatchRequestExpired,
    BatchRequestUnreadable,
    BatchTimeoutError,
)
from lowtide.errors.core import (
    ActorClosedError,
    ActorError,
    AgentDivergedError,
    AgentError,
    AgentRunError,
    BatchNotOutstanding,
    BudgetExceededError,
    ConfigurationError,
    InternalError,
    LedgerError,
    ModelDeprecationWarning,
    ProviderCapabilityError,
    ProviderNotFoundError,
    SpendCapExceededError,
    StructuredOutputError,
    UnstorableValueError,
)
from lowtide.errors.core import (
    classify as classify,  # (lowtide's own, not public: the modules that classify import it from here)
)

__all__ = [
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "APIUnreachableError",
    "ActorClosedError",
    "ActorError",
    "AgentDivergedError",
    "AgentError",
    "AgentRunError",
    "AuthenticationError",
    "BatchNotOutstanding",
    "BatchRequestCanceled",
    "BatchRequestError",
    "BatchRequestErrored",
    "BatchRequestExpired",
    "BatchRequestUnreadable",
    "BatchTimeoutError",
    "BudgetExceededError",
    "ConfigurationError",
    "DeadlineExceededError",
    "InternalError",
    "InvalidRequestError",
    "LedgerError",
    "ModelDeprecationWarning",
    "NotFoundError",
    "OverloadedError",
    "PermissionDeniedError",
    "ProviderCapabilityError",
    "ProviderNotFoundError",
    "RateLimitError",
    "ServerError",
    "SpendCapExceededError",
    "StreamInterruptedError",
    "StructuredOutputError",
    "UnstorableValueError",
]

# Every class keeps `lowtide.errors` as its module, wherever it is written: journals, pickles and messages name it so.
for _name in __all__:
    globals()[_name].__module__ = __name__
