*** Settings ***
Documentation       OpenRouter's crash tests (its Batch API: every request inline in one create; no metadata, no
...                 idempotency key): `__init__.robot` says what each checks. A create whose outcome is unknown is
...                 found in OpenRouter's listing of batches (created since the intent, of as many requests) and, where
...                 two could be it, by the custom ids of their results, as Anthropic's: never sent again while it may
...                 exist.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
OpenRouter: Killed After The Intent Was Committed, Before The Create Was Sent
                      openrouter    after-intent     ${REQUESTS}

OpenRouter: Killed While The Create Was In Flight
                      openrouter    during-create    ${REQUESTS}

OpenRouter: Killed After The Create Answered, Before Its Batch Id Was Recorded
                      openrouter    after-create     ${REQUESTS}

OpenRouter: A Create Whose Answer Is Lost Is Found In The Listing, Not Sent Again
    [Documentation]    The create commits and its answer is lost: the one batch listed since the intent, of as many
    ...    requests, is the intent's; nothing is created again.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    openrouter      reconciled with the API's
