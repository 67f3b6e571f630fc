Feature: The OpenAI emulator keeps what the API keeps: stored chat completions and responses, fine-tuned models
  As a developer of a program using the official openai SDK
  I want every route the SDK calls on what the account keeps to answer as the API does, success and refusal alike
  So that my program's use of stored completions, stored and background responses and model deletion is tested offline

  Every call below goes through the unmodified openai SDK over a loopback socket, on a manual clock; every answer is
  checked again by the SDK's own types, strictly (the messages of a stored completion against the SDK's message type
  loosened to every role, as the API lists them).

  Rule: A chat completion created with store true is listed, read, updated and deleted

    Scenario: Stored completions are listed with their filters and pages, read, updated, and once deleted are gone
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for chat completions:
        | name  | content | store | metadata           |
        | high  | Hello   | true  | {"topic": "tides"} |
        | low   | Again   | true  | {"topic": "winds"} |
        | never | Unkept  | false | {}                 |
      Then the socket OpenAI emulator lists the stored completions "high, low"
      And the socket OpenAI emulator lists the stored completions "low, high" in order "desc"
      And the socket OpenAI emulator lists the stored completions "high" with the metadata topic "tides"
      And the socket OpenAI emulator lists the stored completions "high, low" for the model "gpt-4o-mini"
      And the socket OpenAI emulator lists the stored completions "high, low" for the model "gpt-4o-mini-2024-07-18"
      And the socket OpenAI emulator lists the stored completions "high, low" one page at a time
      And the socket OpenAI emulator stored completion "high" names the model "gpt-4o-mini-2024-07-18" and the metadata {"topic": "tides"}
      And the socket OpenAI emulator stored completion "high" has the messages "user: Hello"
      When the socket OpenAI emulator is asked for chat completions:
        | name     | content                       | store | metadata |
        | briefed  | parts:Where is +the harbour? | true  | {}       |
      Then the socket OpenAI emulator stored completion "briefed" shows its user message as the parts "Where is +the harbour?"
      And the socket OpenAI emulator stored completion "briefed" has the messages "system: Be brief., user: Where is the harbour?"
      When the socket OpenAI emulator stored completion "high" gets the metadata {"topic": "storms"}
      Then the socket OpenAI emulator stored completion "high" names the model "gpt-4o-mini-2024-07-18" and the metadata {"topic": "storms"}
      When the socket OpenAI emulator stored completion "high" is deleted
      Then the socket OpenAI emulator said "chat.completion.deleted" for "high"
      And the socket OpenAI emulator lists the stored completions "low, briefed"

    Scenario Outline: The stored completion routes refuse what the API refuses
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for chat completions:
        | name  | content | store | metadata |
        | kept  | Hello   | true  | {}       |
        | never | Unkept  | false | {}       |
      And the socket OpenAI emulator is called: <call>
      Then the socket OpenAI emulator call failed with <status> "<message>"

      Examples:
        | call                                     | status | message                                              |
        | retrieve never                           | 404    | Chat completion with id '{never}' not found.         |
        | delete never                             | 404    | Chat completion with id '{never}' not found.         |
        | messages never                           | 404    | Chat completion with id '{never}' not found.         |
        | update kept {"metadata": {"a": 1}}       | 400    | Invalid type for 'metadata.a': expected a string     |
        | update kept {"tags": ["a"]}              | 400    | Unknown parameter: 'tags'.                              |
        | update kept {}                           | 400    | Missing required parameter: 'metadata'.              |
        | list {"limit": 0}                        | 400    | Invalid 'limit': expected a value between 1 and 100  |
        | list {"order": "newest"}                 | 400    | Invalid value: 'newest'                              |
        | list {"after": "chatcmpl-none"}          | 404    | Chat completion with id 'chatcmpl-none' not found.   |
        | messages kept {"after": "kept-9"}        | 404    | Message with id 'kept-9' not found.                  |
        | messages kept {"order": "up"}            | 400    | Invalid value: 'up'                                  |

  Rule: A response is stored unless store is false: read, streamed again, continued, compacted and deleted

    Scenario: A stored response is read and streamed again, lists its input items, is continued, and once deleted is gone
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for the response "first" to "Where is the harbour?"
      Then the socket OpenAI emulator returns the response "first" as it answered it, naming "gpt-4o-mini-2024-07-18"
      And the socket OpenAI emulator streams the response "first" again, rebuilt as it answered it
      And the socket OpenAI emulator lists the input items of "first" as "user: Where is the harbour?"
      When the socket OpenAI emulator is asked for the response "second" to "And when is high tide?", continuing "first"
      Then the response "second" read the conversation of "first" before its own input
      And the socket OpenAI emulator counts more input tokens continuing "first" than without it
      And the socket OpenAI emulator lists the input items of "second" as "user: And when is high tide?"
      When the socket OpenAI emulator response "first" is deleted
      Then the socket OpenAI emulator cannot find the response "first"
      And a response continuing "first" is refused with 400 "previous_response_not_found"

    Scenario: A response created with store false is answered but not kept
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for the unstored response "gone" to "Where is the harbour?"
      Then the socket OpenAI emulator cannot find the response "gone"
      And a response continuing "gone" is refused with 400 "previous_response_not_found"

    Scenario: A background response is queued, in progress, then completed; cancelled before then, it stays cancelled
      Given the socket OpenAI emulator runs on a manual clock with 60 processing seconds
      When the socket OpenAI emulator is asked for the background response "slow" to "Where is the harbour?"
      Then the socket OpenAI emulator answered the response "slow" as "queued"
      When the socket OpenAI emulator clock advances 30 seconds
      Then the socket OpenAI emulator shows the response "slow" as "in_progress"
      When the socket OpenAI emulator clock advances 30 seconds
      Then the socket OpenAI emulator shows the response "slow" as "completed"
      When the socket OpenAI emulator is asked for the background response "stopped" to "Where is the harbour?"
      And the socket OpenAI emulator response "stopped" is cancelled
      Then the socket OpenAI emulator answered the response "stopped" as "cancelled"
      When the socket OpenAI emulator clock advances 60 seconds
      Then the socket OpenAI emulator shows the response "stopped" as "cancelled"
      When the socket OpenAI emulator response "slow" is cancelled
      Then the socket OpenAI emulator answered the response "slow" as "completed"

    Scenario: A response not created in the background cannot be cancelled
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for the response "quick" to "Where is the harbour?"
      And the socket OpenAI emulator response "quick" is cancelled
      Then the socket OpenAI emulator call failed with 400 "Cannot cancel a synchronous response."

    Scenario: A conversation is compacted into its user messages and one compaction item
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for the response "first" to "Where is the harbour?"
      And the socket OpenAI emulator compacts "And when is high tide?" after "first"
      Then the compaction holds the user messages "Where is the harbour?, And when is high tide?" and one compaction item

    Scenario Outline: The stored response routes refuse what the API refuses
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for the response "first" to "Where is the harbour?"
      And the socket OpenAI emulator is called: <call>
      Then the socket OpenAI emulator call failed with <status> "<message>"

      Examples:
        | call                                                  | status | message                                                 |
        | retrieve resp_none                                    | 404    | Response with id 'resp_none' not found.                 |
        | delete resp_none                                      | 404    | Response with id 'resp_none' not found.                 |
        | cancel resp_none                                      | 404    | Response with id 'resp_none' not found.                 |
        | input_items resp_none                                 | 404    | Response with id 'resp_none' not found.                 |
        | input_items first {"limit": 101}                      | 400    | Invalid 'limit': expected a value between 1 and 100     |
        | input_items first {"after": "msg_none"}               | 404    | Item with id 'msg_none' not found.                      |
        | get_response first {"stream": "maybe"}                | 400    | Invalid value: 'maybe'                                  |
        | get_response first {"stream": "true", "starting_after": "x"} | 400 | Invalid value: 'x'                                |
        | compact {"model": "gpt-nothing", "input": "Hi"}       | 404    | The model `gpt-nothing` does not exist                  |
        | compact {"input": "Hi"}                               | 400    | Missing required parameter: 'model'.                    |
        | compact {"model": "gpt-4o-mini", "previous_response_id": "resp_none"} | 400 | Previous response with id 'resp_none' not found. |
        | create {"model": "gpt-4o-mini", "input": "Hi", "background": "yes"} | 400 | Invalid type for 'background'                    |

  Rule: Only the account's fine-tuned models can be deleted

    Scenario: A fine-tuned model is listed, described and deleted; a model of the catalogue cannot be deleted
      Given the socket OpenAI emulator runs on a manual clock
      And the socket OpenAI account has a model fine-tuned from "gpt-4o-mini" with the suffix "tides"
      Then the socket OpenAI emulator lists and describes the fine-tuned model, owned by "lowtide"
      When the socket OpenAI emulator deletes the fine-tuned model
      Then the socket OpenAI emulator said the fine-tuned model was deleted, and no longer lists it
      When the socket OpenAI emulator is called: delete_model gpt-4o-mini
      Then the socket OpenAI emulator call failed with 403 "You do not have permission to delete the model `gpt-4o-mini`"
      When the socket OpenAI emulator is called: delete_model ft:gpt-4o-mini:lowtide:gone:abc123
      Then the socket OpenAI emulator call failed with 404 "The model `ft:gpt-4o-mini:lowtide:gone:abc123` does not exist"

  Rule: A state file keeps what the account keeps across restarts

    Scenario: An emulator started again on its state file serves the same stored completions, responses and models
      Given the socket OpenAI emulator runs on a manual clock with 60 processing seconds
      And the socket OpenAI emulator keeps its state in a file
      And the socket OpenAI account has a model fine-tuned from "gpt-4o-mini" with the suffix "tides"
      When the socket OpenAI emulator is asked for chat completions:
        | name | content | store | metadata           |
        | kept | Hello   | true  | {"topic": "tides"} |
      And the socket OpenAI emulator is asked for the response "first" to "Where is the harbour?"
      And the socket OpenAI emulator is asked for the background response "slow" to "Where is the harbour?"
      And the socket OpenAI emulator is started again on its state file
      Then the socket OpenAI emulator stored completion "kept" names the model "gpt-4o-mini-2024-07-18" and the metadata {"topic": "tides"}
      And the socket OpenAI emulator stored completion "kept" has the messages "user: Hello"
      And the socket OpenAI emulator returns the response "first" as it answered it, naming "gpt-4o-mini-2024-07-18"
      And the socket OpenAI emulator lists the input items of "first" as "user: Where is the harbour?"
      And the socket OpenAI emulator shows the response "slow" as "queued"
      And the socket OpenAI emulator lists and describes the fine-tuned model, owned by "lowtide"
      When the socket OpenAI emulator clock advances 60 seconds
      Then the socket OpenAI emulator shows the response "slow" as "completed"

  Rule: Answers and files have the real API's shapes

    Scenario: Live and batch answers name the dated snapshot and a fingerprint of the real API's form
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator is asked for chat completions:
        | name | content | store | metadata |
        | live | Hello   | false | {}       |
      Then the socket OpenAI emulator completion "live" names "gpt-4o-mini-2024-07-18" with a fingerprint "fp_" and 10 hex digits
      When the socket OpenAI emulator runs a batch to "/v1/chat/completions" and one to "/v1/responses" for "gpt-4o-mini"
      Then every output line of the socket OpenAI emulator names "gpt-4o-mini-2024-07-18"
      And every chat completion line of the socket OpenAI emulator has a fingerprint "fp_" and 10 hex digits

    Scenario: Embeddings go through the Batch API, each line answered with its embeddings
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator runs a batch of 2 embeddings
      Then every output line of the socket OpenAI emulator holds one embedding of 1536 numbers for "text-embedding-3-small"

    Scenario: A file uploaded for assistants cannot be downloaded; one for user_data can
      Given the socket OpenAI emulator runs on a manual clock
      When the socket OpenAI emulator holds the upload "notes.txt" for "assistants" and "data.txt" for "user_data"
      Then downloading "notes.txt" from the socket OpenAI emulator fails with 400 "Not allowed to download files of purpose: assistants"
      And downloading "data.txt" from the socket OpenAI emulator gives its bytes

    Scenario: lowtide prices an OpenAI answer naming the dated snapshot as the model it asked for
      Given an emulated OpenAI API
      And an OpenAI actor "tides" with:
        """
        batch_processing: batch
        provider_options: {openai: {endpoint: chat_completions}}
        batch: {coalesce_window: 0.5, poll_interval: 30}
        """
      When the actor is asked these prompts at once:
        | prompt             | key  |
        | When is high tide? | high |
        | When is low tide?  | low  |
      Then every call was answered with the emulated reply to its prompt
      And every answer was priced at batch prices, half the live equivalent
      And every OpenAI answer names the model "gpt-5.4-mini-2026-03-17"
      And the ledger holds these requests:
        | key  | state     | model        |
        | high | succeeded | gpt-5.4-mini |
        | low  | succeeded | gpt-5.4-mini |
