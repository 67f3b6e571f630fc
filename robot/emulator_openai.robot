*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       `lowtide emulator` as a separate process on a loopback socket, driven through its OpenAI API by
...                 the official openai SDK, configured only by OPENAI_BASE_URL and OPENAI_API_KEY as any program
...                 would be: a batch's whole life cycle (upload its input, create it, poll it through validating,
...                 in progress and finalizing to completed, read its output file, delete the files), a Responses
...                 call, and a chat completion and a response streamed, all from the same port as the Anthropic API.

Library             EmulatorOpenAILibrary.py

Suite Setup         Start OpenAI Emulator Process    processing_seconds=1
Suite Teardown      Stop OpenAI Emulator Process


*** Test Cases ***
A Batch Goes Through Its Whole Life Cycle Over The Socket
    ${input}=    Upload Batch Input    3
    ${batch}=    Create OpenAI Batch    ${input}
    ${done}=    Wait Until OpenAI Batch Is Done    ${batch}
    Should Be Equal    ${done}[status]    completed
    Should Contain    ${done}[statuses]    in_progress
    Should Be Equal As Integers    ${done}[request_counts][completed]    3
    Should Be Equal As Integers    ${done}[request_counts][failed]    0
    Should Be Equal    ${done}[error_file_id]    ${None}
    Should Be Equal    ${done}[metadata][suite]    robot
    Output File Should Answer Each Request    ${done}[output_file_id]    3
    Delete File    ${done}[output_file_id]
    Delete File    ${input}

A Responses Call Is Answered Over The Socket
    ${text}=    Ask The Responses API    What is the tide?
    Should Start With    ${text}    Emulated reply to "What is the tide?":${SPACE}
    ${streamed}=    Stream A Response    What is the tide?
    Should Be Equal    ${streamed}    ${text}

A Chat Completion Streams Over The Socket
    ${text}=    Stream A Chat Completion    Is the tide high?
    Should Start With    ${text}    Emulated reply to "Is the tide high?":${SPACE}
