*** Settings ***
Test Timeout        5 minutes    # stuck, not slow
Documentation       lowtide's spans over OTLP/HTTP, from real processes, to a receiver the suite starts on
...                 loopback (`TelemetryLibrary`: the protobuf decoded with `opentelemetry-proto`). Each lowtide
...                 process configures the OpenTelemetry SDK as an application would (`resources/traced.py`).
...                 A call parked by one process, which is then SIGKILLed, and answered by `lowtide collect` in
...                 another, ends in one trace: the collecting process's span is the child of the parked call's,
...                 through the trace context the ledger stored with the request; the collector's batch span is
...                 the child of the killed process's, through the context the ledger stored with the batch, and
...                 so is that of a process collecting a batch another left. `lowtide serve` continues the
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
    # The batch's span in the killed process never ended, so was never sent; the parked call's span, sent as the
    # call returned, links to it, and the collector's batch span continues it: one trace from intent to collection.
    ${batch}=    Received Span    lowtide.batch    collector    lowtide.batch.state=collected
    Span Should Be The Child Of The Span Linked From    ${batch}    ${parked}
    Span Should Link To    ${answer}    ${batch}
    No Received Attribute Should Hold    ${KEY}

A Batch Left By One Process And Collected By Another Is One Trace, Each Process's Batch Span In It
    ${dir}=    Set Variable    ${TEMPDIR}/lowtide-telemetry-left
    Remove Directory    ${dir}    recursive=True
    Create Directory    ${dir}
    Create File    ${dir}/actor.yaml
    ...    name: leaver\nmodel: claude-haiku-4-5\nbatch_processing: batch\nmax_tokens: 64\nbatch: {poll_interval: 0.2, coalesce_window: 0.05}\nledger: ${dir}/ledger.sqlite3\n
    Start Traced    leaver    leave    ${dir}/actor.yaml    tide-1    When is high tide?    &{ENV}
    ${code}=    Wait For Traced    leaver
    Should Be Equal As Integers    ${code}    0
    ${first}=    Received Span    lowtide.batch    leaver    lowtide.batch.state=left
    Wait Until Keyword Succeeds    60s    1s    Collect Key In Another Process    ${dir}    tide-1    later
    ${collected}=    Received Span    lowtide.batch    later    lowtide.batch.state=collected
    Span Should Be The Child Of    ${collected}    ${first}
    ${services}=    Services In The Trace Of    ${first}
    Should Be Equal    ${services}    ${{ ["later", "leaver"] }}

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
    Collect Key In Another Process    ${dir}    harbour-1    collector

Collect Key In Another Process
    [Arguments]    ${dir}    ${key}    ${service}
    Start Traced    ${service}    lowtide    collect    --ledger    ${dir}/ledger.sqlite3    &{ENV}
    ${code}=    Wait For Traced    ${service}
    Should Be Equal As Integers    ${code}    0
    Received Span    lowtide.answer    ${service}    timeout=1    lowtide.key=${key}

Stop Everything
    Stop Traced Processes
    Stop OTLP Receiver
    Stop Emulator
    Clean Up
