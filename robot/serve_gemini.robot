*** Settings ***
Test Timeout        10 minutes    # stuck, not slow
Documentation       `lowtide serve` as a real process on a loopback socket, for an actor whose batch provider speaks
...                 Gemini's `generateContent` (the tidegem plugin: lowtide's fake batch API behind Gemini's wire),
...                 driven by the official google-genai Python SDK, unmodified but for its base URL: plain and
...                 streamed calls under both API versions, concurrent calls coalesced into one batch, a call sent
...                 again answered from the ledger, and a wrong key refused in Google's shape.

Library             ServeGeminiLibrary.py

Suite Setup         Start Serve In Front Of A Gemini Batch Actor
Suite Teardown      Stop Serve


*** Test Cases ***
The google-genai SDK Gets An Answer Through A Batch, Under Both API Versions
    ${text}=    Ask With The Gemini SDK    What is a tide?
    Should Be Equal    ${text}    tidegem: What is a tide?
    ${text}=    Ask With The Gemini SDK    Why do tides turn?    version=v1
    Should Be Equal    ${text}    tidegem: Why do tides turn?
    The Ledger Should Hold    2    2

The google-genai SDK Streams An Answer As One Chunk, And The Same Call Again Is Answered From The Ledger
    ${text}=    Ask With The Gemini SDK    Tell me about tides    stream=${True}
    Should Be Equal    ${text}    tidegem: Tell me about tides
    ${again}=    Ask With The Gemini SDK    Tell me about tides    stream=${True}
    Should Be Equal    ${again}    ${text}
    The Ledger Should Hold    3    3

Twenty Concurrent Calls Travel In One Batch
    ${distinct}=    Ask Concurrently With The Gemini SDK    20
    Should Be Equal As Integers    ${distinct}    20
    The Ledger Should Hold    4    23

A Wrong Key Is Refused In Google's Shape
    ${error}=    The Gemini SDK With The Wrong Key Is Refused
    Should Be Equal As Integers    ${error}[code]    401
    Should Be Equal    ${error}[status]    UNAUTHENTICATED
    The Ledger Should Hold    4    23
