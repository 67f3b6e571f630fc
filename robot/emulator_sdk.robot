*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       `lowtide emulator` as a separate process on a loopback socket, driven by the official SDK
...                 through every Message Batches endpoint (create, retrieve, list, results, cancel, delete),
...                 the Messages endpoint, plain and streamed, token counting, and a file upload that a batch
...                 reads; faults armed over the admin route, among them answers lost or held back after the
...                 work is done; the server's own count of the calls, checked against the calls made; and a
...                 server killed and started again on its state file.

Library             EmulatorSdkLibrary.py

Suite Setup         Start Emulator Process    processing_seconds=1
Suite Teardown      Stop Emulator Process


*** Test Cases ***
The Messages Endpoint Answers Over The Socket
    ${text}=    Send Message    What is the tide?
    Should Start With    ${text}    Emulated reply to "What is the tide?":${SPACE}
    ${streamed}=    Stream Message    What is the tide?
    Should Be Equal    ${streamed}    ${text}

A Batch Goes From In Progress To Ended With One Result Per Request
    ${batch}=    Create Batch    3
    Batch Status Should Be    ${batch}    in_progress
    ${counts}=    Wait Until Batch Has Ended    ${batch}
    Should Be Equal As Integers    ${counts}[succeeded]    3
    Should Be Equal As Integers    ${counts}[processing]    0
    Results Should Be    ${batch}    succeeded    3

Listing Pages Through Every Batch, Newest First
    ${first}=    Create Batch    1
    ${second}=    Create Batch    2
    ${third}=    Create Batch    1
    Listing Should Show Every Batch Newest First    1    ${first}    ${second}    ${third}

A Canceled Batch Ends With Its Requests Canceled
    ${batch}=    Create Batch    2
    ${status}=    Cancel Batch    ${batch}
    Should Be Equal    ${status}    canceling
    ${counts}=    Wait Until Batch Has Ended    ${batch}
    Should Be Equal As Integers    ${counts}[canceled]    2
    Results Should Be    ${batch}    canceled    2

An Ended Batch Can Be Deleted, And Is Then Gone
    ${batch}=    Create Batch    1
    Wait Until Batch Has Ended    ${batch}
    Delete Batch    ${batch}

A Fault Armed Over The Admin Route Fails The Next Call Only
    Arm Fault    messages.create    529    retry_after=2
    Message Should Fail With    OverloadedError    529
    Last Error Header Should Be    retry-after    2
    ${text}=    Send Message    Again
    Should Start With    ${text}    Emulated reply to "Again":

A Create Whose Answer Is Dropped Fails With A Connection Error, Yet Its Batch Exists
    Arm Fault Of Kind    batches.create    drop_after_commit
    Create Batch Should Lose Its Answer    3    prefix=lost-
    ${batch}=    Newest Batch Should Hold    3
    Emulator Should Have Created Each Once    lost-    3
    Wait Until Batch Has Ended    ${batch}
    Results Should Be    ${batch}    succeeded    3    prefix=lost-

A Create Whose Answer Is Delayed Answers Late
    Arm Fault Of Kind    batches.create    delay_after_commit    seconds=1
    ${started}=    Get Time    epoch
    ${batch}=    Create Batch    1    prefix=late-
    ${ended}=    Get Time    epoch
    Should Be True    ${ended} - ${started} >= 1
    Emulator Should Have Created Each Once    late-    1

Slow Results Still Arrive Whole
    Arm Fault Of Kind    batches.results    slow    seconds=0.05
    ${batch}=    Create Batch    4    prefix=slow-
    Wait Until Batch Has Ended    ${batch}
    Results Should Be    ${batch}    succeeded    4    prefix=slow-

Tokens Are Counted As Billed, And A Batch Reads An Uploaded File
    ${counted}=    Count Tokens    What is the tide?
    ${billed}=    Input Tokens Billed For    What is the tide?
    Should Be Equal As Integers    ${counted}    ${billed}
    ${file}=    Upload File    tides.txt    The tide is high at noon. It is low at six.
    ${batch}=    Create Batch Reading File    ${file}    When is the tide high?    2    prefix=doc-
    Wait Until Batch Has Ended    ${batch}
    Every Result Should Quote The File    ${batch}    ${file}    The tide is high at noon.

The Emulator Counted Exactly The Calls Made
    Emulator Should Have Counted Every Call

The Emulator Stops Cleanly On SIGTERM
    ${code}=    Stop Emulator Process
    Should Be Equal As Integers    ${code}    0
    Emulator Port Should Be Closed

A Restarted Emulator Serves The Batches Of Its State File
    [Documentation]    The first server is killed with SIGKILL, so that only what its state file held survives.
    ${state}=    New State File Path
    Start Emulator Process    processing_seconds=1    state_file=${state}
    ${ended}=    Create Batch    2
    ${canceled}=    Create Batch    3
    Cancel Batch    ${canceled}
    Wait Until Batch Has Ended    ${ended}
    ${before}=    Download Results    ${ended}
    ${running}=    Create Batch    2
    Kill Emulator Process
    Start Emulator Process    processing_seconds=1    state_file=${state}
    ${after}=    Download Results    ${ended}
    Should Be Equal    ${before}    ${after}
    Results Should Be    ${ended}    succeeded    2
    Wait Until Batch Has Ended    ${canceled}
    Results Should Be    ${canceled}    canceled    3
    Wait Until Batch Has Ended    ${running}
    Results Should Be    ${running}    succeeded    2
    Emulator Should Have Counted Every Call
    ${code}=    Stop Emulator Process
    Should Be Equal As Integers    ${code}    0
