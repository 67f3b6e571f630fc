*** Settings ***
Test Timeout        5 minutes    # stuck, not slow
Documentation       lowtide's spans over OTLP/HTTP, from real processes, to a receiver the suite starts on
...                 loopback (`TelemetryLibrary`: the protobuf decoded with `opentelemetry-proto`). Each lowtide
...                 process configures the OpenTelemetry SDK as an application would (`resources/traced.py`).
...                 A call parked by one process, which is then SIGKILLed, and answered by `lowtide collect` in
...                 another, ends in one trace: the collecting process's span is the child of the parked call's,
...                 through the trace context the ledger stored with the request. `lowtide serve` continues the
...                 trace of a client's `traceparent`.

Library             OperatingSystem
Library             LowtideLibrary.py
Library             TelemetryLibrary.py

Suite Setup         Start Everything
Suite Teardown      Stop Everything


*** Variables ***
${KEY}              sk-ant-robot-telemetry-key
${TRACEPARENT}      00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01


*** Test Cases ***
A Call Parked By A Killed Process And Collected By Another Ends In One Trace
    ${dir}=    Set Variable    ${TEMPDIR}/lowtide-telemetry-park
    Remove Directory    ${dir}    recursive=True
    Create Directory    ${dir}
    Create File    ${dir}/actor.yaml
    ...    name: parker\nmodel: claude-haiku-4-5\nbatch_processing: batch\nmax_tokens: 64\nbatch: {poll_interval: 0.2, coalesce_window: 0.05}\nledger: ${dir}/ledger.sqlite3\n
    Start Traced    parker    park    ${dir}/actor.yaml    harbour-1    Is the harbour open?    &{ENV}
    Wait For Output    parker    parked harbour-1
    Kill Traced    parker
    ${parked}=    Received Span    chat claude-haiku-4-5    parker    lowtide.call=submit
    Wait Until Keyword Succeeds    60s    1s    Collect In Another Process    ${dir}
    ${answer}=    Received Span    lowtide.answer    collector    lowtide.key=harbour-1
    Span Should Be The Child Of    ${answer}    ${parked}
    ${services}=    Services In The Trace Of    ${parked}
    Should Be Equal    ${services}    ${{ ["collector", "parker"] }}
    Should Have Received Span    lowtide.batch    collector
    No Received Attribute Should Hold    ${KEY}

Lowtide Serve Continues A Client's Traceparent
    ${dir}=    Set Variable    ${TEMPDIR}/lowtide-telemetry-serve
    Remove Directory    ${dir}    recursive=True
    Create Directory    ${dir}
    Create File    ${dir}/actor.yaml
    ...    name: server\nmodel: claude-haiku-4-5\nbatch_processing: batch\nmax_tokens: 64\nbatch: {poll_interval: 0.2, coalesce_window: 0.05}\n
    Start Traced    server    lowtide    serve    --actor    ${dir}/actor.yaml    --port    0    --client-key    local-secret
    ...    --ledger    ${dir}/ledger.sqlite3    &{ENV}
    ${url}=    Listening URL Of    server
    ${status}=    Ask Served Actor    ${url}    local-secret    ${TRACEPARENT}
    Should Be Equal As Integers    ${status}    200
    ${call}=    Received Span    chat claude-haiku-4-5    server    lowtide.call=run
    Span Should Continue The Trace    ${call}    ${TRACEPARENT}
    No Received Attribute Should Hold    ${KEY}
    No Received Attribute Should Hold    local-secret


*** Keywords ***
Start Everything
    ${receiver}=    Start OTLP Receiver    ${TEMPDIR}
    ${url}=    Start Emulator    2
    &{env}=    Create Dictionary    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${receiver}    ANTHROPIC_BASE_URL=${url}
    ...    ANTHROPIC_API_KEY=${KEY}    LOWTIDE_POLL_INTERVAL=0.2
    Set Suite Variable    &{ENV}    &{env}

Collect In Another Process
    [Arguments]    ${dir}
    Start Traced    collector    lowtide    collect    --ledger    ${dir}/ledger.sqlite3    &{ENV}
    ${code}=    Wait For Traced    collector
    Should Be Equal As Integers    ${code}    0
    Received Span    lowtide.answer    collector    timeout=1    lowtide.key=harbour-1

Stop Everything
    Stop Traced Processes
    Stop OTLP Receiver
    Stop Emulator
    Clean Up
