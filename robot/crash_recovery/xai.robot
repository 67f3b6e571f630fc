*** Settings ***
Documentation       xAI's crash tests (its own Batch API: a batch made empty under a name made from the intent, then
...                 its requests added in one call): `__init__.robot` says what each checks. What costs is the add
...                 (`xai.batches.add`), so the checks count it where the others count their create. A client killed
...                 after its named batch was made and recorded, before the add, has that empty batch canceled when run
...                 again and its requests added to another: the add is made once in all.

Resource            ../resources/crash_recovery.resource

Suite Teardown      Clean Up And Stop PostgreSQL
Test Template       Killed At A Crash Point


*** Test Cases ***    PROVIDER    CRASHPOINT    REQUESTS
xAI: Killed After The Intent Was Committed, Before The Create Was Sent
                      xai    after-intent          ${REQUESTS}

xAI: Killed After The Named Batch Was Made And Recorded, Before Its Requests Were Added
                      xai    after-step-batch      ${REQUESTS}

xAI: Killed While The Add Of Its Requests Was In Flight
                      xai    during-create         ${REQUESTS}

xAI: Killed After The Add Answered, Before Its Batch Id Was Recorded
                      xai    after-create          ${REQUESTS}

xAI: An Add Whose Answer Is Lost Is Found By The Batch's Name, Not Sent Again
    [Documentation]    The add commits and its answer is lost: the batch named for the intent holds every request its
    ...    name counts, so it is the intent's; nothing is added again.
    [Template]    A Create Whose Answer Is Lost Is Paid Once
    xai             by its metadata
