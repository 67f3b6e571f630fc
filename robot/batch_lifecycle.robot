*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       An actor configured with `batch_processing: batch` gets its model calls answered through the
...                 Message Batches API of `lowtide emulator`, a separate process on a loopback socket: submit,
...                 poll, stream the results, map each line to its own outcome; time out, cancel, survive faults.

Library             LowtideLibrary.py

Suite Setup         Start Emulator    processing_seconds=${PROCESSING}    cancel_seconds=${CANCELING}
Suite Teardown      Clean Up
Test Setup          Reset Emulator


*** Variables ***
${PROCESSING}       1.5
${CANCELING}        0.3


*** Test Cases ***
Several Calls Travel As One Batch And Come Back At Half Price
    [Documentation]    Submit, poll, results, mapping: `run_many` records its calls in the ledger and makes one
    ...    batch, polls it until it ends, streams the results once and maps each line to the response of its request.
    Create Batch Actor    planner    model=claude-sonnet-5-5    poll_interval=0.15
    @{prompts}=    Create List
    ...    Plan the move of the nightly report job to a task queue.
    ...    Plan retries with backoff for the payment webhook.
    ...    Plan the removal of the legacy login page.
    ${outcomes}=    Run Prompts In One Batch    @{prompts}
    Length Should Be    ${outcomes}    3
    ${batch_id}=    Set Variable    ${outcomes[0].ids.batch_id}
    Should Start With    ${batch_id}    msgbatch_
    FOR    ${index}    ${outcome}    IN ENUMERATE    @{outcomes}
        Response Should Be Well Formed    ${outcome}    custom_id=request-${index}    batch_id=${batch_id}
        ...    model=claude-sonnet-5-5
        Cost Should Be Half The Live Price    ${outcome}
        # The emulator quotes the prompt it answers: results arrive in any order and must be joined on custom_id.
        Should Contain    ${outcome.text}    ${prompts}[${index}]
    END
    Should Not Be Equal    ${outcomes[0].text}    ${outcomes[1].text}
    ${create}=    Emulator Call Count    batches.create
    ${retrieve}=    Emulator Call Count    batches.retrieve
    ${results}=    Emulator Call Count    batches.results
    ${live}=    Emulator Call Count    messages.create
    Should Be Equal As Integers    ${create}    1    msg=Three calls should make one batch
    # The SDK's `batches.results()` retrieves the batch once itself, to find its `results_url`.
    ${polls}=    Evaluate    ${retrieve} - ${results}
    Should Be True    ${polls} >= 2    msg=The batch should be polled while in progress (${polls} polls)
    Should Be Equal As Integers    ${results}    1    msg=Results should be streamed once
    Should Be Equal As Integers    ${live}    0    msg=Batch mode must not call the live API
    ${batch}=    Retrieve Batch With SDK    ${batch_id}
    Should Be Equal    ${batch.processing_status}    ended
    Should Be Equal As Integers    ${batch.request_counts.succeeded}    3

A Batch Answer Matches The Live Answer At Half Its Price
    [Documentation]    The same call in batch mode and, as a per-call override, in live mode: the same text and
    ...    tokens; the batch response costs half of what the live one costs.
    Create Batch Actor    summarizer    model=claude-haiku-4-5
    ${batch}=    Run Prompt    Summarize why batch APIs cost half as much as live calls.
    ${live}=    Run Prompt    Summarize why batch APIs cost half as much as live calls.    mode=live
    Should Be Equal    ${batch.mode.value}    batch
    Should Be Equal    ${live.mode.value}    live
    Should Be Equal    ${batch.text}    ${live.text}
    Should Be Equal    ${batch.usage}    ${live.usage}
    Should Be Equal    ${batch.cost.live_equivalent_usd}    ${live.cost.total_usd}
    Cost Should Be Half The Live Price    ${batch}
    Should Start With    ${batch.ids.batch_id}    msgbatch_
    Should Be Equal    ${live.ids.batch_id}    ${None}
    Should Be True    $live.cost.total_usd == 2 * $batch.cost.total_usd

Each Request Of A Partly Failed Batch Gets Its Own Outcome
    [Documentation]    Errored, expired and canceled requests each become their own error type; their neighbours
    ...    in the same batch are answered normally.
    # max_attempts 1: what may succeed in another batch is not sent again, so all stay in one batch.
    Create Batch Actor    reviewer    max_attempts=1
    ${outcomes}=    Run Prompts In One Batch
    ...    Review: a migration that renames a column in place.
    ...    [[emulator:errored:overloaded_error]] Review: a cache of feature flags.
    ...    [[emulator:expired]] Review: a new index on the orders table.
    ...    [[emulator:canceled]] Review: a retry loop without a limit.
    ...    Review: a change that logs every request body.
    Length Should Be    ${outcomes}    5
    ${batch_id}=    Set Variable    ${outcomes[0].ids.batch_id}
    Response Should Be Well Formed    ${outcomes}[0]    custom_id=request-0    batch_id=${batch_id}
    ...    model=claude-sonnet-5-5
    Response Should Be Well Formed    ${outcomes}[4]    custom_id=request-4    batch_id=${batch_id}
    ...    model=claude-sonnet-5-5
    Outcome Should Be A    ${outcomes}[1]    BatchRequestErrored
    Should Be Equal    ${outcomes[1].error_type}    overloaded_error
    Should Be True    ${outcomes[1].retryable}
    Outcome Should Be A    ${outcomes}[2]    BatchRequestExpired
    Should Be True    ${outcomes[2].retryable}
    Outcome Should Be A    ${outcomes}[3]    BatchRequestCanceled
    FOR    ${index}    ${outcome}    IN ENUMERATE    @{outcomes}[1:4]    start=1
        Should Be Equal    ${outcome.batch_id}    ${batch_id}
        Outcome Should Name The Request    ${outcome}    request-${index}
    END
    ${create}=    Emulator Call Count    batches.create
    Should Be Equal As Integers    ${create}    1
    ${batch}=    Retrieve Batch With SDK    ${batch_id}
    Should Be Equal As Integers    ${batch.request_counts.succeeded}    2
    Should Be Equal As Integers    ${batch.request_counts.errored}    1
    Should Be Equal As Integers    ${batch.request_counts.expired}    1
    Should Be Equal As Integers    ${batch.request_counts.canceled}    1

A Batch Past Its Maximum Wait Is Canceled
    [Documentation]    `max_wait` shorter than the processing time with `on_timeout: cancel`: `BatchTimeoutError`
    ...    names the batch, and the emulator was asked to cancel it.
    Create Batch Actor    impatient    poll_interval=0.1    max_wait=0.3    on_timeout=cancel
    ${error}=    Run Prompt Expecting Batch Timeout    Take your time with this one.
    Should Start With    ${error.batch_id}    msgbatch_
    Should Contain    ${error.args[0]}    ${error.batch_id}
    Should Be True    ${error.canceled}
    Should Be True    ${error.elapsed} >= 0.3
    ${cancels}=    Emulator Call Count    batches.cancel
    Should Be Equal As Integers    ${cancels}    1
    ${batch}=    Retrieve Batch With SDK    ${error.batch_id}
    Should Contain    ${{ ['canceling', 'ended'] }}    ${batch.processing_status}
    Should Not Be Equal    ${batch.cancel_initiated_at}    ${None}

A Batch Past Its Maximum Wait Can Be Left Running And Collected Later
    [Documentation]    The `leave` policy raises `BatchTimeoutError` without a cancel call; the batch keeps running
    ...    and `ClaudeBatchProvider.wait` and `collect` pick its results up afterwards.
    Create Batch Actor    patient    poll_interval=0.1    max_wait=0.3    on_timeout=leave
    ${error}=    Run Prompt Expecting Batch Timeout    Answer whenever you are ready.    custom_id=parked-1
    Should Start With    ${error.batch_id}    msgbatch_
    Should Not Be True    ${error.canceled}
    ${cancels}=    Emulator Call Count    batches.cancel
    Should Be Equal As Integers    ${cancels}    0
    ${batch}=    Retrieve Batch With SDK    ${error.batch_id}
    Should Be Equal    ${batch.processing_status}    in_progress
    Open Batch Provider    poll_interval=0.1    max_wait=20
    ${ended}=    Wait For Batch    ${error.batch_id}
    Should Be Equal    ${ended.processing_status}    ended
    ${outcomes}=    Collect Batch Results    ${error.batch_id}
    Response Should Be Well Formed    ${outcomes}[0]    custom_id=parked-1    batch_id=${error.batch_id}
    ...    model=claude-sonnet-5-5
    ${cancels}=    Emulator Call Count    batches.cancel
    Should Be Equal As Integers    ${cancels}    0

A Canceled Batch Ends With Every Unprocessed Request Canceled
    [Documentation]    `provider.submit(PreparedBatch([...]))`, then `provider.cancel(batch_id)`: the batch moves
    ...    to `canceling`, ends, and `collect` gives a `BatchRequestCanceled` for each request.
    Open Batch Provider    poll_interval=0.1    max_wait=20
    ${batch_id}=    Submit Batch    Write a haiku about tides.    Write a limerick about queues.
    ...    Write an ode to half-price tokens.    prefix=poem
    Should Start With    ${batch_id}    msgbatch_
    ${status}=    Cancel Batch    ${batch_id}
    Should Be Equal    ${status}    canceling
    ${batch}=    Wait For Batch    ${batch_id}
    Should Be Equal    ${batch.processing_status}    ended
    Should Be Equal As Integers    ${batch.request_counts.canceled}    3
    ${outcomes}=    Collect Batch Results    ${batch_id}
    Length Should Be    ${outcomes}    3
    FOR    ${index}    ${outcome}    IN ENUMERATE    @{outcomes}    start=1
        Outcome Should Be A    ${outcome}    BatchRequestCanceled
        Should Be Equal    ${outcome.custom_id}    poem-${index}
        Should Be Equal    ${outcome.batch_id}    ${batch_id}
    END
    ${cancels}=    Emulator Call Count    batches.cancel
    Should Be Equal As Integers    ${cancels}    1

A Server Error While Polling Is Retried
    [Documentation]    One status check answered with a 500: lowtide retries it and the call succeeds. The poll
    ...    interval is longer than the processing time, so without the fault one status check would do.
    Create Batch Actor    resilient    poll_interval=2.0
    Inject Fault    batches.retrieve    500    times=1
    ${outcomes}=    Run Prompts In One Batch    Keep going after a server error.
    Response Should Be Well Formed    ${outcomes}[0]    custom_id=request-0    batch_id=${outcomes[0].ids.batch_id}
    ...    model=claude-sonnet-5-5
    ${retrieve}=    Emulator Call Count    batches.retrieve
    # The results are read from the ended batch's `results_url`, with no further look-up of the batch.
    Should Be Equal As Integers    ${retrieve}    2    msg=The failed status check and its retry

A Rate Limit While Polling Waits As Long As The API Asks
    [Documentation]    One status check answered with a 429 and `retry-after: 0.2`: lowtide waits the 0.2 s the API
    ...    asked for (not its own backoff, which starts at 1 s) and retries.
    Create Batch Actor    polite    poll_interval=2.0
    Inject Fault    batches.retrieve    429    times=1    retry_after=0.2
    ${outcomes}=    Run Prompts In One Batch    Keep going after a rate limit.
    Lowtide Should Have Waited As The API Asked    0.2    poll_interval=2.0
    Response Should Be Well Formed    ${outcomes}[0]    custom_id=request-0    batch_id=${outcomes[0].ids.batch_id}
    ...    model=claude-sonnet-5-5
    ${retrieve}=    Emulator Call Count    batches.retrieve
    Should Be Equal As Integers    ${retrieve}    2    msg=The limited status check and its retry

Rate Limited Submission And Result Download Are Retried
    [Documentation]    A 429 on create (refused outright, so safe to retry) and a 429 on the results download.
    Create Batch Actor    persistent
    Inject Fault    batches.create    429    times=1    retry_after=0.1
    Inject Fault    batches.results    429    times=1    retry_after=0.1
    ${outcomes}=    Run Prompts In One Batch    First of two.    Second of two.
    FOR    ${index}    ${outcome}    IN ENUMERATE    @{outcomes}
        Response Should Be Well Formed    ${outcome}    custom_id=request-${index}
        ...    batch_id=${outcomes[0].ids.batch_id}    model=claude-sonnet-5-5
    END
    ${stats}=    Emulator Stats
    Should Be Equal As Integers    ${stats}[batches]    1    msg=The refused create must not leave a batch
    ${create}=    Emulator Call Count    batches.create
    ${results}=    Emulator Call Count    batches.results
    Should Be Equal As Integers    ${create}    2
    Should Be Equal As Integers    ${results}    2
