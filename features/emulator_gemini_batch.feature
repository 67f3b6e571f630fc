Feature: The emulator serves Gemini's Files API and Batch API, on its clock, with Gemini's faults
  As a developer of lowtide's Gemini batch provider (or of any program using the official google-genai SDK)
  I want the emulator to take files through the SDK's resumable upload and run batch jobs as Gemini runs them
  So that batch work with Gemini can be tested offline: every job state, results joined by key, and the faults

  Every call below is made by the unmodified google-genai SDK, in process on a manual clock unless a scenario says
  it goes over a socket; a job takes 100 virtual seconds unless a scenario says otherwise.

  Rule: A job of inline requests runs on the clock and answers each request as generateContent would

    Scenario Outline: An inline job is pending, then running, then succeeded, its answers joined by key, under <version>
      Given the Gemini batch emulator runs on a manual clock, called through API version "<version>"
      When I create a Gemini batch "tides-run" of "gemini-2.5-flash" inline with the keys "brest, cherbourg, saint-malo"
      Then the Gemini batch is "JOB_STATE_PENDING" with the display name "tides-run"
      When 50 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_RUNNING" with the display name "tides-run"
      And the Gemini batch stats count 3 requests, 0 failed, some still pending
      When 60 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_SUCCEEDED" with the display name "tides-run"
      And the Gemini batch stats count 3 requests, 0 failed, none pending
      And each Gemini batch answer, joined by key, is the answer generateContent gives its prompt

      Examples:
        | version |
        | v1      |
        | v1beta  |

    Scenario: A request the model would refuse fails alone, and the job still succeeds
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      And the Gemini emulator's request "armed" is armed to fail with "rate_limit_error"
      When I create a Gemini batch "mixed" of "gemini-2.5-flash" inline with the keys "good, bad-temperature, armed"
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_SUCCEEDED" with the display name "mixed"
      And the Gemini batch stats count 3 requests, 2 failed, none pending
      And the Gemini batch answer for "bad-temperature" is the error 3 mentioning "temperature must be in [0, 2]"
      And the Gemini batch answer for "armed" is the error 8 mentioning "quota"
      And the Gemini batch answer for "good" is the answer generateContent gives its prompt

    Scenario: Jobs are listed newest first, a page at a time
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I create Gemini batches named "first, second, third", a second apart
      Then the Gemini batch list in pages of 2 is "third, second" then "first"

    Scenario: A job cancelled while it runs ends CANCELLED with no output, and an ended job cannot be cancelled
      Given the Gemini batch emulator runs on a manual clock, cancels taking 5 seconds
      When I create a Gemini batch "to-cancel" of "gemini-2.5-flash" inline with the keys "a, b, c, d"
      And 50 seconds pass on the Gemini batch clock
      And I cancel the Gemini batch
      And I cancel the Gemini batch
      Then the Gemini batch is "JOB_STATE_RUNNING" with the display name "to-cancel"
      When 5 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_CANCELLED" with the display name "to-cancel"
      And the Gemini batch has no output
      When I cancel the Gemini batch
      Then the Gemini batch call fails with 400 "FAILED_PRECONDITION" mentioning "cannot be cancelled"

    Scenario: A deleted job is gone
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I create a Gemini batch "to-delete" of "gemini-2.5-flash" inline with the keys "a"
      And I delete the Gemini batch
      Then getting the Gemini batch fails with 404 "NOT_FOUND" mentioning "not found"
      And the Gemini batch list is empty

  Rule: Refusals come with Google's statuses and error bodies

    Scenario Outline: A create the API refuses is refused whole: <what>
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I post to the Gemini batch emulator "<path>" the body <body>
      Then the Gemini batch raw answer is <code> "<status>" mentioning "<mention>"

      Examples:
        | what              | path                                                   | body | code | status | mention |
        | an unknown model  | /v1beta/models/gemini-9-ultra:batchGenerateContent     | {"batch": {"inputConfig": {"requests": {"requests": [{"request": {"contents": [{"parts": [{"text": "hi"}]}]}}]}}}} | 404 | NOT_FOUND | models/gemini-9-ultra is not found |
        | no input          | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"displayName": "x"}} | 400 | INVALID_ARGUMENT | input_config: required |
        | two inputs        | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"fileName": "files/a", "requests": {"requests": []}}}} | 400 | INVALID_ARGUMENT | exactly one of file_name or requests |
        | no requests       | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"requests": {"requests": []}}}} | 400 | INVALID_ARGUMENT | must not be empty |
        | a request missing | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"requests": {"requests": [{"metadata": {"key": "a"}}]}}}} | 400 | INVALID_ARGUMENT | requests[0].request: required |
        | an unknown field  | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"colour": "blue"}} | 400 | INVALID_ARGUMENT | Unknown name "colour" at 'batch' |
        | a missing file    | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"fileName": "files/nowhere"}}} | 404 | NOT_FOUND | files/nowhere |
        | not a file name   | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"fileName": "gs://bucket/a"}}} | 400 | INVALID_ARGUMENT | must be a file's name |
        | not JSON          | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": | 400 | INVALID_ARGUMENT | Invalid JSON |
        | not an object     | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | [] | 400 | INVALID_ARGUMENT | Expected an object |
        | no batch          | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {} | 400 | INVALID_ARGUMENT | batch: required |
        | a numeric name    | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"displayName": 7}} | 400 | INVALID_ARGUMENT | batch.display_name |
        | a bad priority    | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"priority": "high"}} | 400 | INVALID_ARGUMENT | batch.priority |
        | requests a list   | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"requests": []}}} | 400 | INVALID_ARGUMENT | Expected an object for 'batch.input_config.requests' |
        | a request a list  | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"requests": {"requests": [[]]}}}} | 400 | INVALID_ARGUMENT | requests.requests[0]' |
        | bad metadata      | /v1beta/models/gemini-2.5-flash:batchGenerateContent   | {"batch": {"inputConfig": {"requests": {"requests": [{"request": {}, "metadata": 3}]}}}} | 400 | INVALID_ARGUMENT | requests[0].metadata |
        | a bad page size   | /v1beta/batches?pageSize=many                          | GET | 400 | INVALID_ARGUMENT | page_size |
        | a negative size   | /v1beta/batches?pageSize=-2                            | GET | 400 | INVALID_ARGUMENT | must not be negative |
        | a bad file page   | /v1beta/files?pageSize=many                            | GET | 400 | INVALID_ARGUMENT | page_size |
        | a bad file token  | /v1beta/files?pageToken=zzz                            | GET | 400 | INVALID_ARGUMENT | Invalid page token |
        | no alt=media      | /v1beta/files/nowhere:download                         | GET | 400 | INVALID_ARGUMENT | alt=media |
        | a bad page token  | /v1beta/batches?pageToken=zzz                          | GET | 400 | INVALID_ARGUMENT | Invalid page token |
        | an unknown batch  | /v1beta/batches/nowhere                                | GET | 404 | NOT_FOUND | batches/nowhere not found |
        | an unknown file   | /v1beta/files/nowhere                                  | GET | 403 | PERMISSION_DENIED | File nowhere or it may not exist |
        | no key            | /v1beta/batches                                        | GET without a key | 403 | PERMISSION_DENIED | unregistered callers |

    Scenario: A job's priority and display name are kept as sent
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I post to the Gemini batch emulator "/v1beta/models/gemini-2.5-flash:batchGenerateContent" the body {"batch": {"displayName": "urgent", "priority": "5", "inputConfig": {"requests": {"requests": [{"request": {"contents": [{"parts": [{"text": "hi"}]}]}}]}}}}
      Then the Gemini batch raw answer is a pending job "urgent" of priority "5"

    Scenario: Inline requests past the inline size limit must go through a file
      Given the Gemini batch emulator runs on a manual clock with inline batches of at most 2000 bytes
      When I create a Gemini batch "too-big" of "gemini-2.5-flash" inline with 30 long requests
      Then the Gemini batch call fails with 400 "INVALID_ARGUMENT" mentioning "Request payload size exceeds the limit: 2000 bytes"

  Rule: Files are uploaded by the SDK's resumable protocol, listed, described, expired and deleted

    Scenario: A small file is uploaded in one call, described, listed, and deleted
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 3 requests named "tide-input"
      Then the Gemini file is ACTIVE, UPLOADED, of the bytes sent, "application/jsonl", expiring 48 hours after its creation
      And the Gemini file list names it
      And the Gemini emulator served 1 upload start and 1 upload chunk
      And downloading the Gemini file fails with 400 "INVALID_ARGUMENT" mentioning "Only generated files can be downloaded"
      When I delete the Gemini file
      Then getting the Gemini file fails with 403 "PERMISSION_DENIED" mentioning "may not exist"

    Scenario: A large file is uploaded in chunks, and arrives whole
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1"
      And the google-genai SDK uploads in chunks of 1024 bytes
      When I upload to the Gemini emulator a JSONL file of 40 requests named "tide-many"
      Then the Gemini file is ACTIVE, UPLOADED, of the bytes sent, "application/jsonl", expiring 48 hours after its creation
      And the Gemini emulator served 1 upload start and more than 3 upload chunks

    Scenario: A file is gone 48 hours after its creation, and files are listed a page at a time
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 1 requests named "early"
      And 3600 seconds pass on the Gemini batch clock
      And I upload to the Gemini emulator a JSONL file of 1 requests named "later"
      Then the Gemini file list in pages of 1 is "later" then "early"
      When 169200 seconds pass on the Gemini batch clock
      Then the Gemini file list in pages of 1 is "later"

    Scenario: An upload session refuses what the protocol does not allow
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      Then a Gemini upload with the offset 5 before any byte is refused with 400 mentioning "upload offset 5"
      And a Gemini upload to an unknown session is refused with 404 mentioning "No upload session"
      And a Gemini upload finalized short of its announced size is refused with 400 mentioning "finalized after 3 of the 10 bytes"
      And a Gemini upload start without the resumable protocol is refused with 400 mentioning "resumable"
      And a Gemini upload start of a file larger than the limit is refused with 400 mentioning "exceeds the limit"
      And a Gemini upload start whose body is not JSON is refused with 400 mentioning "Invalid JSON"
      And a Gemini upload start whose body is a list is refused with 400 mentioning "Expected an object"
      And a Gemini upload start of the size "many" is refused with 400 mentioning "Invalid upload size"
      And a Gemini upload start without a MIME type is refused with 400 mentioning "needs a MIME type"
      And a Gemini upload start naming the file "-bad-" is refused with 400 mentioning "Invalid file name"
      And a Gemini upload session taking 4 bytes of the 3 announced is refused with 400 mentioning "More than the 3 bytes"
      And a Gemini upload with the command "cancel" is refused with 400 mentioning "must be upload, finalize or query"

    Scenario: A file named by its uploader keeps its name, and a second upload of that name is refused
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 1 requests as "files/tide-table-1"
      Then the Gemini file's name is "files/tide-table-1"
      And uploading the Gemini file "files/tide-table-1" again fails with 409 "ALREADY_EXISTS" mentioning "already exists"

    Scenario: A fault met by an upload's chunk says the upload is over, so the SDK raises it at once
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      Then a Gemini upload chunk meeting a 503 fault is answered 503 "UNAVAILABLE" with the upload status "final"

    Scenario: A chunk past the file size limit is refused
      Given the Gemini batch emulator runs on a manual clock with files of at most 100 bytes
      Then a Gemini upload session sent 200 bytes at once is refused with 400 mentioning "exceeds the limit of 100 bytes"

  Rule: A job of a file's requests writes its answers to a responses file

    Scenario: A job from an uploaded file succeeds with a responses file, joined by key, a bad row failing alone
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 3 requests and one with a temperature of 3 named "mixed-input"
      And I create a Gemini batch "from-file" of "gemini-2.5-flash" from the uploaded file
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_SUCCEEDED" with the display name "from-file"
      And the Gemini batch stats count 4 requests, 1 failed, none pending
      And the Gemini batch's responses file is GENERATED and downloadable
      And the Gemini batch's responses file, joined by key, answers as generateContent does, the bad row with error 3

    Scenario Outline: A file <what> makes a job that FAILED
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a file whose second line is <line>
      And I create a Gemini batch "bad-file" of "gemini-2.5-flash" from the uploaded file
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_FAILED" with the display name "bad-file"
      And the Gemini batch's error mentions "<mention>"
      And the Gemini batch has no output

      Examples:
        | what                         | line                                  | mention            |
        | with a line without request  | {"key": "k9", "contents": []}         | Line 2             |
        | with a line not JSON         | {"key": "k9",                         | Line 2             |
        | with a key not a string      | {"key": 9, "request": {}}             | Line 2             |
        | of blank lines only          | blank, and so is every other          | holds no requests  |

    Scenario: A responses file deleted stays deleted, and the job still names it
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 2 requests named "input"
      And I create a Gemini batch "from-file" of "gemini-2.5-flash" from the uploaded file
      And 200 seconds pass on the Gemini batch clock
      And I delete the Gemini batch's responses file
      Then getting the Gemini batch's responses file fails with 403 "PERMISSION_DENIED" mentioning "may not exist"

  Rule: Faults and time: what a client of the real API meets, injected the way the other emulations inject it

    Scenario: 429 with its RetryInfo, 500 and 503 on the batch routes
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When the Gemini batch emulator's "gemini.batches.create" fails next with 429 asking for a wait of 30 seconds
      And I create a Gemini batch "throttled" of "gemini-2.5-flash" inline with the keys "a"
      Then the Gemini batch call fails with 429 "RESOURCE_EXHAUSTED" mentioning "quota"
      And the Gemini batch error asks for a retry delay of "30s"
      And the Gemini batch list is empty
      When the Gemini batch emulator's "gemini.batches.create" fails next with 500
      And I create a Gemini batch "broken" of "gemini-2.5-flash" inline with the keys "a"
      Then the Gemini batch call fails with 500 "INTERNAL" mentioning "internal error"
      When the Gemini batch emulator's "gemini.batches.list" fails next with 503
      Then listing Gemini batches fails with 503 "UNAVAILABLE" mentioning "overloaded"

    Scenario: A create whose answer is lost made its job all the same, found again by its display name
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      And the Gemini emulator's "gemini.batches.create" drops its next answer after committing
      When I create a Gemini batch "run-7f3a" of "gemini-2.5-flash" inline with the keys "a, b"
      Then the Gemini batch create failed without an answer
      And listing Gemini batches finds exactly one named "run-7f3a"
      And the Gemini emulator created 1 batch holding the keys "a, b"

    Scenario: A responses file whose download is cut part way fails the read, and the next download is whole
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I upload to the Gemini emulator a JSONL file of 3 requests named "input"
      And I create a Gemini batch "cut" of "gemini-2.5-flash" from the uploaded file
      And 200 seconds pass on the Gemini batch clock
      And the Gemini batch emulator's "gemini.files.download" is cut after 1 line
      Then downloading the Gemini batch's responses file fails part way
      And downloading the Gemini batch's responses file gives 3 lines

    Scenario: A job still pending or running 48 hours after its creation EXPIRED, with no output
      Given the Gemini batch emulator runs on a manual clock taking 72 hours per job
      When I create a Gemini batch "slow" of "gemini-2.5-flash" inline with the keys "a, b"
      And 172799 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_RUNNING" with the display name "slow"
      When 1 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_EXPIRED" with the display name "slow"
      And the Gemini batch has no output

    Scenario: Requests armed by key are lost, garbled or ended, in inline output and in a responses file
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      And the Gemini emulator's request "b" is lost, "k1" garbled as "bad-json" and "k0" ends "expired"
      When I create a Gemini batch "inline" of "gemini-2.5-flash" inline with the keys "a, b"
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch stats count 2 requests, 0 failed, none pending
      And the Gemini batch's inline answers name only the keys "a"
      When I upload to the Gemini emulator a JSONL file of 3 requests named "input"
      And I create a Gemini batch "from-file" of "gemini-2.5-flash" from the uploaded file
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch's responses file holds the error 4 for "k0", a line no JSON reader takes for "k1", and an answer for "k2"

    Scenario: The emulator's stats count the jobs and their keys, and a reset forgets them
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      When I create a Gemini batch "counted" of "gemini-2.5-flash" inline with the keys "a, b"
      Then the Gemini emulator's stats show 1 batch with the keys "a, b"
      When the Gemini batch emulator is reset
      Then the Gemini emulator's stats show no batch
      And the Gemini batch list is empty

    Scenario: A job the emulator is told to fail ends FAILED when its pending time ends
      Given the Gemini batch emulator runs on a manual clock, called through API version "v1beta"
      And the Gemini emulator fails its next batch
      When I create a Gemini batch "doomed" of "gemini-2.5-flash" inline with the keys "a"
      Then the Gemini batch is "JOB_STATE_PENDING" with the display name "doomed"
      When 10 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_FAILED" with the display name "doomed"
      And the Gemini batch's error mentions "internal error"

  Rule: A state file keeps Gemini's files and jobs across restarts

    Scenario: An emulator started again on its state file still holds the uploaded files and the jobs
      Given the Gemini batch emulator runs on a manual clock with a state file
      And the Gemini emulator fails its next batch
      When I create a Gemini batch "doomed" of "gemini-2.5-flash" inline with the keys "x"
      And I cancel the Gemini batch
      And I upload to the Gemini emulator a JSONL file of 2 requests named "kept-input"
      And I create a Gemini batch "kept-run" of "gemini-2.5-flash" from the uploaded file
      And the Gemini batch emulator is started again from its state file
      And 200 seconds pass on the Gemini batch clock
      Then the Gemini batch is "JOB_STATE_SUCCEEDED" with the display name "kept-run"
      And the Gemini batch list in pages of 1 is "kept-run" then "doomed"
      And the Gemini file list names "kept-input" and the job's responses
      And the Gemini emulator created 2 batches holding the keys "k0, k1"

  Rule: Over a socket, the SDK uploads, batches and downloads as it would at Google

    Scenario: A program using google-genai uploads a file, runs a job from it and downloads its responses over a socket
      Given the Gemini batch emulator serves on a socket, its jobs done at once
      When a google-genai client over the socket uploads 2 requests, runs a job "wire-run", downloads its responses
      Then the responses downloaded over the socket answer the keys "k0, k1"
