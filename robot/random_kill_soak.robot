*** Settings ***
Test Timeout        ${TEST_TIMEOUT}    # stuck, not slow: 2 rounds take a few minutes on a loaded machine
Documentation       The random-kill soak: batch-mode clients SIGKILLed at random moments across the whole life cycle
...                 (intent, create in flight, reconciliation, polling, streaming results), over three batches of the
...                 same size per client, with creates answered late and some failing with an unknown outcome (a 500,
...                 or a committed batch whose answer is dropped). Each round then runs every group of keys to
...                 completion and asks the API itself, through the official SDK (every batch listed, every result
...                 streamed), whether any custom id was created twice; the clients' outputs say whether any answer
...                 was lost; a client that does not finish is a hang.
...
...                 Seeded: a failing round names the seed and round that replay it. The default run is short (two
...                 rounds of two Anthropic processes, one round of two OpenAI and of two Gemini processes: their
...                 batch APIs' shapes; the crash suite kills their clients at every crash point on every run); the
...                 `soak` nox session runs 200 rounds of each (`docs/reliability.md`). Each provider's batch API gets
...                 the same rounds (`Run Soak ... provider=NAME`); the API's answer to "created twice?" comes through
...                 that provider's official SDK (`_sdk_audits.py`). Tests tagged `long` run in the `soak` session only.

Library             SoakLibrary.py

Suite Setup         Start Emulator    processing_seconds=${PROCESSING}
Suite Teardown      Clean Up


*** Variables ***
${ROUNDS}           2
# The rounds of the default run's other providers (the `soak` session passes 200, as it does ROUNDS).
${PROVIDER_ROUNDS}  1
${FIRST_ROUND}      1
# Drawn (of `lowtide-N`) so that the default run's few rounds arm both kinds of unknown-outcome create (a 500, a create
# committed and its answer dropped) in each test, with a kill in each: a seed not chosen left that to chance
# (`lowtide`'s rounds armed no dropped create in Anthropic's test, no 500 in Gemini's).
${SEED}             lowtide-5907
${PROCESSING}       1
# The `soak` session's 200 rounds take most of an hour per test.
${TEST_TIMEOUT}     10 minutes


*** Test Cases ***
One Process Killed At Random Over Same-Size Batches Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more (its rounds kill one client or both)
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1

Two Processes On One Ledger, Creating While The Other Reconciles, Pay Once And Lose No Answer
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2

One OpenAI Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=openai

Two OpenAI Processes On One Ledger Pay Once And Lose No Answer
    Run Soak    ${PROVIDER_ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=openai

One Gemini Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=gemini

Two Gemini Processes On One Ledger Pay Once And Lose No Answer
    Run Soak    ${PROVIDER_ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=gemini

One Bedrock Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # Bedrock's soak runs in the `soak` session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=bedrock

Two Bedrock Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # Bedrock's soak runs in the `soak` session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=bedrock

One Mistral Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # in the `soak` session only, as the issue's 200 rounds for each provider are
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=mistral

Two Mistral Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # in the `soak` session only, as the issue's 200 rounds for each provider are
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=mistral

One Azure OpenAI Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the soak session runs the Azure rounds; the crash suite holds its fault cases in `robot`
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=azure_openai

Two Azure OpenAI Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=azure_openai

One Groq Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=groq

Two Groq Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # Groq's batch path is OpenAI's (the crash suite covers it on every run): soak session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=groq

One Together Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=together

Two Together Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # the crash suite covers Together's create paths on every run: soak session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=together

One OpenAI-Compatible Endpoint Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=openai_compatible

Two OpenAI-Compatible Endpoint Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # the crash suite covers the endpoint's create paths on every run: soak session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=openai_compatible

One Fireworks Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=fireworks

Two Fireworks Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # the crash suite covers Fireworks' create paths on every run: soak session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=fireworks

One OpenRouter Process Killed At Random Pays Once And Loses No Answer
    [Tags]    long    # the two-process case covers the same paths and more: this one runs in the `soak` session
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=1    provider=openrouter

Two OpenRouter Processes On One Ledger Pay Once And Lose No Answer
    [Tags]    long    # the crash suite covers OpenRouter's create paths on every run: soak session only
    Run Soak    ${ROUNDS}    ${SEED}    first_round=${FIRST_ROUND}    processes=2    provider=openrouter
