*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       `lowtide serve` over a socket, in front of `lowtide emulator`, with clients in other languages: the
...                 official TypeScript SDKs (`@anthropic-ai/sdk`, `openai` and `@google/genai`, pinned in
...                 `robot/clients/package.json`) under node, and curl; Google's SDK against a server for an actor
...                 speaking Gemini's wire (the tidegem plugin, `robot/_tidegem.py`). Run by the `serve_clients` nox
...                 session, which installs the SDKs into ${CLIENTS_DIR} beside copies of the client programs; the plain
...                 `robot` session leaves it out.

Library             ServeLibrary.py

Suite Setup         Start Emulator And Servers    processing_seconds=0.5    gemini=${True}
Suite Teardown      Stop Emulator And Servers
Test Setup          Reset Emulator Counters
Test Tags           serve-client


*** Variables ***
${CLIENTS_DIR}      ${CURDIR}/../build/serve-clients


*** Test Cases ***
The TypeScript Anthropic SDK Gets Messages, A Stream And A Tool Call
    ${seen}=    Run Client    node    ${CLIENTS_DIR}/client.mjs    anthropic
    Should Be True    ${seen}[text]
    Should Be True    ${seen}[stream_rebuilds_final]
    Should Be Equal    ${seen}[tool]    get_tide
    Should Be Equal    ${seen}[stop_reason]    tool_use
    Emulator Should Have Created    anthropic    3    3

The TypeScript OpenAI SDK Gets Chat Completions, Responses, Streams And A Tool Call
    ${seen}=    Run Client    node    ${CLIENTS_DIR}/client.mjs    openai
    Should Be True    ${seen}[text]
    Should Be True    ${seen}[stream_text]
    Should Be True    ${seen}[stream_usage]
    Should Be True    ${seen}[response_text]
    Should Be True    ${seen}[response_stream_rebuilds_final]
    Should Be Equal    ${seen}[tool]    get_tide
    Should Be Equal    ${seen}[after_tool]    stop
    Emulator Should Have Created    openai    6    6

The TypeScript google-genai SDK Gets An Answer And A Stream, And A Wrong Key Is Refused
    ${seen}=    Run Client    node    ${CLIENTS_DIR}/client.mjs    gemini
    Should Be Equal    ${seen}[text]    tidegem: What is a tide?
    Should Be Equal    ${seen}[finish_reason]    STOP
    Should Be True    ${seen}[total_tokens] > 0
    Should Be Equal    ${seen}[stream_text]    tidegem: Tell me about tides
    Should Be Equal As Integers    ${seen}[stream_chunks]    1
    Should Be Equal As Integers    ${seen}[wrong_key_status]    401

Twenty Concurrent Requests From Node Are Coalesced Into One Batch
    ${seen}=    Run Client    node    ${CLIENTS_DIR}/client.mjs    concurrent
    Should Be Equal As Integers    ${seen}[distinct]    20
    Emulator Should Have Created    openai    1    20

A Request Node Sends Twice Is Paid Once
    ${seen}=    Run Client    node    ${CLIENTS_DIR}/client.mjs    retry
    Should Be True    ${seen}[same]
    Emulator Should Have Created    anthropic    1    1

Curl Gets A Chat Completion, A Streamed Response And A Message
    ${seen}=    Run Client    bash    ${CLIENTS_DIR}/curl.sh
    Should Be Equal    ${seen}[chat][object]    chat.completion
    Should Not Be Empty    ${seen}[chat][choices][0][message][content]
    Should Be Equal    ${seen}[message][type]    message
    Should Be Equal    ${seen}[stream_last_event]    response.completed
    Should Be True    ${seen}[stream_events] > 3
    Should Be Equal As Integers    ${seen}[wrong_key_status]    401
    Emulator Should Have Created    openai    2    2
    Emulator Should Have Created    anthropic    1    1
