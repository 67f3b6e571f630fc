*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       `lowtide serve` as a real process on a loopback socket, configured by an actor file and pointed at
...                 `lowtide emulator` (another process), answered through batches: the official anthropic and openai
...                 Python SDKs are its clients, unmodified but for their base URL. Plain and streamed requests,
...                 tools, concurrent requests coalesced into one batch, and a retry that is not paid twice.

Library             ServeLibrary.py

Suite Setup         Start Emulator And Servers    processing_seconds=0.5
Suite Teardown      Stop Emulator And Servers
Test Setup          Reset Emulator Counters


*** Test Cases ***
The Anthropic SDK Gets A Message Through A Batch
    Ask With The Anthropic SDK    What is a tide?
    Emulator Should Have Created    anthropic    1    1

The Anthropic SDK Streams A Message Replayed From Its Batch
    Ask With The Anthropic SDK    Tell me about tides    stream=${True}
    Emulator Should Have Created    anthropic    1    1

The Anthropic SDK Gets A Tool Call
    ${name}=    Ask For A Tool Call With The Anthropic SDK    When is the next tide?
    Should Be Equal    ${name}    get_tide

The OpenAI SDK Gets A Chat Completion And A Response Through Batches
    Ask With The OpenAI SDK    What is a tide?    api=chat
    Ask With The OpenAI SDK    What is a tide?    api=responses
    Emulator Should Have Created    openai    2    2

The OpenAI SDK Streams A Chat Completion And A Response
    Ask With The OpenAI SDK    Tell me about tides    api=chat    stream=${True}
    Ask With The OpenAI SDK    Tell me about tides    api=responses    stream=${True}
    Emulator Should Have Created    openai    2    2

The OpenAI SDK Calls A Tool And Sends Its Result Back
    ${name}=    Ask For A Tool Call With The OpenAI SDK    When is the next tide?
    Should Be Equal    ${name}    get_tide
    Emulator Should Have Created    openai    2    2

Twenty Concurrent Requests Of Each SDK Are Coalesced Into One Batch Each
    ${anthropic}=    Ask Concurrently    anthropic    20
    Should Be Equal As Integers    ${anthropic}    20
    Emulator Should Have Created    anthropic    1    20
    ${openai}=    Ask Concurrently    openai    20
    Should Be Equal As Integers    ${openai}    20
    Emulator Should Have Created    openai    1    20

A Client That Gave Up And Retried Is Not Paid Twice
    Ask And Give Up Before The Batch Ends    anthropic    Retry me, Anthropic
    ${first}=    Ask With The Anthropic SDK    Retry me, Anthropic
    ${again}=    Ask With The Anthropic SDK    Retry me, Anthropic
    Should Be Equal    ${first}    ${again}
    Emulator Should Have Created    anthropic    1    1
    Ask And Give Up Before The Batch Ends    openai    Retry me, OpenAI
    ${first}=    Ask With The OpenAI SDK    Retry me, OpenAI
    ${again}=    Ask With The OpenAI SDK    Retry me, OpenAI
    Should Be Equal    ${first}    ${again}
    Emulator Should Have Created    openai    1    1

A Wrong Client Key Is Refused By Both Servers
    ${status}=    Ask With A Wrong Key    anthropic
    Should Be Equal As Integers    ${status}    401
    ${status}=    Ask With A Wrong Key    openai
    Should Be Equal As Integers    ${status}    401
    Emulator Should Have Created    anthropic    0    0
    Emulator Should Have Created    openai    0    0
