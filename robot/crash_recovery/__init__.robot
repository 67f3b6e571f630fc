*** Settings ***
Test Timeout        10 minutes    # stuck, not slow: the longest take a few minutes on a loaded machine
Documentation       A batch-mode client killed with SIGKILL at any stage of a batch's life loses no answer and pays
...                 for nothing twice, over every provider's batch API: the same program run again with the same keys
...                 and the same ledger finishes the work, every request is answered once, and the API created each
...                 request in exactly one batch (or job). A create whose answer is lost is not sent again: the
...                 client finds the batch (Anthropic: by time and request count, then its first custom id; OpenAI,
...                 Azure OpenAI, Groq, Mistral, an OpenAI-compatible endpoint: by the intent id in its metadata; Gemini, Vertex AI: in its display name;
...                 Together: by its input file, named after the intent) or, Bedrock, makes the create again under the
...                 same clientRequestToken and is answered with the job the first create made.
...
...                 The kill points are the batching engine's, the same code for every provider: Anthropic's tests
...                 kill the client at each of them (and the PostgreSQL ledger's again). What differs by provider is
...                 its own primitive for finding a create again, and each provider's tests reach it both ways: killed
...                 after the intent (the API holds no batch: looked for, not found, sent once), killed after its input
...                 was uploaded and recorded (created from that upload, uploaded once), and a create whose answer is
...                 lost (found, or Bedrock: made again under its token, and not paid twice).
...
...                 The tests are in one file per group of providers (Anthropic and OpenAI; Azure OpenAI, Bedrock,
...                 Gemini and Vertex AI; Groq, Mistral and Together; an OpenAI-compatible endpoint; the PostgreSQL ledger's), each
...                 a suite that pabot runs in a `robot` process of its own, side by side; what they share is
...                 `resources/crash_recovery.resource`.
...                 Each test names its provider first (`Groq: ...`; one provider's tests: `--test "Groq:*"`), has its
...                 own ledger and its file's `lowtide emulator` (a separate process on a loopback socket, serving
...                 every provider's API, started by the file's first test), reset before each test as if started
...                 anew (`Fresh Emulator`). The client (`resources/crash_client.py --provider ...`, through the
...                 provider's own SDK) is killed by lowtide's own crash points (`LOWTIDE_CRASHPOINT`); a create still
...                 in flight when it dies is kept in flight by the emulator's `delay_after_commit` fault, which
...                 commits the batch and answers only later. The killed client runs unmeasured by coverage (SIGKILL
...                 leaves none to write); the client run again after it, and the one whose create's answer is lost,
...                 run in the `robot` process itself (`Run Client In This Process`: the same client code and
...                 environment, an interpreter's start-up and the SDK's imports saved), so that each test starts
...                 one process. The tests tagged `postgres` (`nox -s postgres`) run the Anthropic crash tests on a
...                 PostgreSQL ledger, a database of their own each in a throwaway cluster. Since schema 7 the intent
...                 writes no request row (a request's batch is its latest membership, a pending one a row of
...                 `pending_requests`): a client killed between the intent and the create leaves every request
...                 submitting in the intent, which the next run reconciles (the API holds no batch) and sends once.

# Every test's setup and teardown. The suite teardown is in each file: the library's instance is its file's suite's
# (scope SUITE), and one imported here would be another, with no emulator to stop.
Test Setup          Fresh Emulator    processing_seconds=${PROCESSING}
Test Teardown       Stop The Test's Clients
