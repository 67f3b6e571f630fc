Feature: Checks before anything is spent
  As a developer in my first hour with lowtide
  I want a call the API would refuse to be refused at once, saying what is wrong, before it is recorded or sent
  So that a typo costs me an error message, not a ledger entry, a batch, or a day's wait for an errored result

  Background:
    Given an emulated Anthropic API

  Rule: The model is one the API serves, as its models endpoint says

    Scenario Outline: A misspelt model is refused with the closest names, and nothing is recorded or sent
      Given an actor "planner" with:
        """
        model: <model>
        batch_processing: <mode>
        """
      When the actor is asked "Plan issue 42"
      Then a ConfigurationError is raised
      And the error message is:
        """
        model: the API at http://emulator.invalid has no model '<model>'. Did you mean <suggestions>?
        """
      And the error names the field "model"
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 1     |
        | models.list     | 1     |
      And the ledger holds no requests and no batches

      Examples:
        | model            | mode  | suggestions                                                 |
        | claude-sonet-4-5 | batch | 'claude-sonnet-4-5', 'claude-sonnet-5-5' or 'claude-sonnet-4-6' |
        | claude-sonet-5-5 | batch | 'claude-sonnet-5-5', 'claude-sonnet-4-5' or 'claude-sonnet-5'   |
        | claude-opsu-5-5  | live  | 'claude-opus-5-5', 'claude-opus-5' or 'claude-opus-4-8'         |

    Scenario: The list of models is read once for suggestions; when it cannot be read, a model is refused without them
      Given the API will fail the next "models.list" call with status 500
      And an actor "planner" with:
        """
        model: claude-sonet-5-5
        batch_processing: batch
        """
      When the actor is asked "Plan issue 42"
      Then a ConfigurationError is raised
      And the error message is:
        """
        model: the API at http://emulator.invalid has no model 'claude-sonet-5-5' (GET /v1/models lists the models it serves).
        """
      When the actor is asked "Plan issue 43"
      And the actor is asked "Plan issue 44"
      Then the error message contains "Did you mean 'claude-sonnet-5-5', 'claude-sonnet-4-5' or 'claude-sonnet-5'?"
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 1     |
        | models.list     | 2     |

    Scenario: A model nothing resembles is refused, pointing to the list of models
      Given an actor "planner" with:
        """
        model: gpt-4o
        batch_processing: batch
        """
      When the actor is asked "Plan issue 42"
      Then a ConfigurationError is raised
      And the error message is:
        """
        model: the API at http://emulator.invalid has no model 'gpt-4o' (GET /v1/models lists the models it serves).
        """

    Scenario: A retired model, which the endpoint still describes, is refused with its end of life and replacement
      Given an actor "scout" with:
        """
        model: claude-mythos-preview
        batch_processing: batch
        """
      When the actor is asked "Scan the harbour logs"
      Then a ConfigurationError is raised
      And the error message is:
        """
        model: 'claude-mythos-preview' was retired on 2026-06-30 and the API no longer serves it; use 'claude-mythos-5-2' instead.
        """
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 1     |
      And the ledger holds no requests and no batches

    Scenario: A deprecated model the API no longer has is refused with its end of life and replacement
      Given an actor "planner" with:
        """
        model: claude-sonnet-4-20250514
        batch_processing: live
        """
      When the actor is asked "Plan issue 42"
      Then a ConfigurationError is raised
      And the error message is:
        """
        model: the API at http://emulator.invalid has no model 'claude-sonnet-4-20250514' (end of life: 2026-06-15); use 'claude-sonnet-5-5' instead.
        """
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 1     |

    Scenario: An alias the API resolves to a dated model is accepted
      Given an actor "summarizer" with:
        """
        model: claude-haiku-4-5
        batch_processing: batch
        """
      When the actor is asked "Summarize the week"
      Then the answer is the emulated reply to "Summarize the week"

    Scenario: A misspelt model in a parked call is refused before it is recorded
      Given an actor "planner" with:
        """
        model: claude-sonet-5-5
        batch_processing: batch
        """
      When the actor parks "Plan issue 42" with the key "plan-issue-42"
      Then a ConfigurationError is raised
      And the error names the field "model"
      And the ledger holds no requests and no batches

    Scenario: A run of many requests is checked once per model, and a misspelt one is refused before anything is sent
      Given an actor "planner" in batch mode
      When the actor runs these prompts, with these models, as one call of run_many:
        | prompt  | model             |
        | First   | claude-sonnet-5-5 |
        | Second  | claude-sonnet-5-5 |
        | Third   | claude-sonet-5-5  |
      Then a ConfigurationError is raised
      And the error names the field "model"
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 2     |
        | models.list     | 1     |

    Scenario: A bulk run whose job names a misspelt model is refused, naming the job, before the run is recorded
      Given an actor "reader" in batch mode
      When the actor maps, in Python:
        """
        ["Review 0", "Review 1", {"prompt": "Review 2", "id": "third", "model": "claude-sonet-5-5"}, "Review 3"]
        """
      Then a ConfigurationError is raised
      And the error message is:
        """
        Job 2 (third): model: the API at http://emulator.invalid has no model 'claude-sonet-5-5'. Did you mean 'claude-sonnet-5-5', 'claude-sonnet-4-5' or 'claude-sonnet-5'?
        """
      And the ledger has no run
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 2     |
        | models.list     | 1     |

    Scenario: A wrong API key is refused by the models endpoint, before anything is recorded
      Given an emulated Anthropic API that accepts only the key "sk-ant-api03-the-right-key"
      And an actor "locked-out" in batch mode
      When the actor is asked "Hello"
      Then the call fails with AuthenticationError
      And the API error has status 401 and a request id
      And the ledger holds no requests and no batches
      And the API received only these calls:
        | call            | count |
        | models.retrieve | 1     |

  Rule: Each model is looked up once in a process, per endpoint and credentials

    Scenario: Every actor on one client, and every concurrent call, shares one look-up of the model
      Given an actor "planner" in batch mode
      And an actor "reviewer" in live mode
      When the actor is asked 5 prompts of 40 characters at once
      And actor "planner" is asked "Plan issue 42"
      And actor "reviewer" is asked "Review issue 42"
      Then the API received these calls:
        | call            | count |
        | models.retrieve | 1     |
        | models.list     | 0     |

    Scenario: Actors that build their own clients share a look-up when they reach one endpoint with one key
      Given an actor "first" that builds its own client, with the API key "sk-ant-api03-first"
      And an actor "second" that builds its own client, with the API key "sk-ant-api03-first"
      And an actor "third" that builds its own client, with the API key "sk-ant-api03-third"
      When actor "first" is asked "One"
      And actor "second" is asked "Two"
      And actor "third" is asked "Three"
      Then the API received these calls:
        | call            | count |
        | models.retrieve | 2     |

  Rule: When the models endpoint cannot say, the call is not held up: the check is skipped, and that is logged once

    Scenario: A models endpoint out of reach is skipped, logged once, and the calls are answered
      Given the API's models endpoint refuses connections
      And an actor "planner" in batch mode
      And an actor "chatter" in live mode
      And the warnings of "lowtide.providers.anthropic.checks" are kept
      When actor "planner" is asked "Plan issue 42"
      And actor "chatter" is asked "Chat about issue 42"
      And actor "chatter" is asked "Chat about issue 43"
      Then the answer is the emulated reply to "Chat about issue 43"
      And "lowtide.providers.anthropic.checks" warned once: "The models endpoint of http://emulator.invalid cannot be reached (APIConnectionError): model names are not checked before sending."

    Scenario: A models endpoint that answers with an error is skipped, logged once, and asked again by later calls
      Given the API will fail the next 2 "models.retrieve" calls with status 503
      And an actor "chatter" in live mode
      And the warnings of "lowtide.providers.anthropic.checks" are kept
      When the actor is asked "One"
      And the actor is asked "Two"
      And the actor is asked "Three"
      And the actor is asked "Four"
      Then the answer is the emulated reply to "Four"
      And "lowtide.providers.anthropic.checks" warned once: "The models endpoint of http://emulator.invalid answered 503: model names are not checked before sending."
      And the API received these calls:
        | call            | count |
        | models.retrieve | 3     |
        | messages.create | 4     |

    Scenario: With the endpoint out of reach, a model is sent unchecked, and the API's own refusal comes back
      Given the API's models endpoint refuses connections
      And an actor "chatter" with:
        """
        model: claude-sonet-5-5
        """
      When the actor is asked "Hello"
      Then the call fails with NotFoundError
      And the error message contains "model: claude-sonet-5-5"

  Rule: max_tokens is within what the model may write

    Scenario Outline: max_tokens beyond the model's output limit, as the models endpoint gives it, is refused
      Given an actor "writer" with:
        """
        model: <model>
        max_tokens: <max_tokens>
        batch_processing: batch
        """
      When the actor is asked "Write the harbour's history"
      Then a ConfigurationError is raised
      And the error message is:
        """
        max_tokens: <max_tokens> is more than '<model>' may write (at most <limit> output tokens).
        """
      And the error names the field "max_tokens"
      And the ledger holds no requests and no batches

      Examples:
        | model             | max_tokens | limit  |
        | claude-haiku-4-5  | 64001      | 64000  |
        | claude-sonnet-5-5 | 128001     | 128000 |

    Scenario: max_tokens at the model's limit is sent
      Given an actor "writer" with:
        """
        model: claude-haiku-4-5
        max_tokens: 64000
        """
      When the actor is asked "Write the harbour's history"
      Then the answer is the emulated reply to "Write the harbour's history"

    Scenario: With the models endpoint out of reach, lowtide's own table of limits applies
      Given the API's models endpoint refuses connections
      And an actor "writer" with:
        """
        model: claude-sonnet-5-5
        max_tokens: 128001
        """
      When the actor is asked "Write the harbour's history"
      Then a ConfigurationError is raised
      And the error message is:
        """
        max_tokens: 128001 is more than 'claude-sonnet-5-5' may write (at most 128000 output tokens).
        """
      And the API received no calls at all

    Scenario: A model neither the endpoint nor lowtide's table knows a limit for is sent as asked
      Given an emulated Anthropic API that also serves the models "claude-unknown-9"
      And the API's models endpoint refuses connections
      And an actor "writer" with:
        """
        model: claude-unknown-9
        max_tokens: 100000
        """
      When the actor is asked "Write the harbour's history"
      Then the answer is the emulated reply to "Write the harbour's history"

  Rule: There is something to send

    Scenario Outline: A prompt with no text is refused before anything is sent
      Given an actor "planner" in <mode> mode
      When the actor is asked, in Python, with:
        """
        {"prompt": <prompt>}
        """
      Then a ConfigurationError is raised
      And the error message is:
        """
        prompt: the prompt is <what>; the API refuses a message with no text.
        """
      And the error names the field "prompt"
      And the API received no calls at all
      And the ledger holds no requests and no batches

      Examples:
        | mode  | prompt   | what            |
        | batch | ""       | empty           |
        | batch | " \n\t " | only whitespace |
        | live  | ""       | empty           |
        | live  | "   "    | only whitespace |

    Scenario: An empty prompt is refused when a call is parked too
      Given an actor "planner" in batch mode
      When the actor parks "" with the key "plan-issue-42"
      Then a ConfigurationError is raised
      And the error names the field "prompt"
      And the ledger holds no requests and no batches

    Scenario Outline: Messages with no content are refused, naming the message
      Given an actor "planner" in batch mode
      When the actor is asked, in Python, with:
        """
        {"messages": <messages>}
        """
      Then a ConfigurationError is raised
      And the error message is:
        """
        <message>
        """
      And the error names the field "<field>"
      And the API received no calls at all

      Examples:
        | messages                                                                          | field                     | message                                                                                   |
        | [{"role": "user", "content": ""}]                                                 | messages.0.content        | messages.0.content: the message is empty; the API refuses a message with no content.        |
        | [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": " "}, {"role": "user", "content": "Go on"}] | messages.1.content | messages.1.content: the message is only whitespace; the API refuses a message with no content. |
        | [{"role": "user", "content": []}]                                                 | messages.0.content        | messages.0.content: the message has no content blocks; the API needs one.                  |
        | [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "  "}]}] | messages.0.content.1.text | messages.0.content.1.text: the text block is only whitespace; the API refuses it. |
        | [{"role": "user", "content": [{"type": "text", "text": ""}]}]                     | messages.0.content.0.text | messages.0.content.0.text: the text block is empty; the API refuses it.                     |

    Scenario: A last assistant turn may be empty: the model continues it
      Given an actor "planner" in live mode
      When the actor is asked, in Python, with:
        """
        {"messages": [{"role": "user", "content": [{"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}, {"type": "text", "text": "Say hi"}]}, {"role": "assistant", "content": ""}]}
        """
      Then the answer is the emulated reply to "Say hi"

  Rule: Tools are named and described as the API wants

    Scenario Outline: A tool the API would refuse is refused, naming the tool's field
      Given an actor "recorder" in <mode> mode
      When the actor is asked, in Python, with:
        """
        {"prompt": "Record the tide", "tools": <tools>}
        """
      Then a ConfigurationError is raised
      And the error message is:
        """
        <message>
        """
      And the error names the field "<field>"
      And the ledger holds no requests and no batches

      Examples:
        | mode  | tools                                                                                                  | field                     | message                                                                                                                    |
        | batch | [{"name": "record tide", "input_schema": {"type": "object"}}]                                          | tools.0.name              | tools.0.name: 'record tide' is not a tool name the API accepts: 1 to 128 letters, digits, '_' or '-' (^[a-zA-Z0-9_-]{1,128}$). |
        | live  | [{"name": "record.tide", "input_schema": {"type": "object"}}]                                          | tools.0.name              | tools.0.name: 'record.tide' is not a tool name the API accepts: 1 to 128 letters, digits, '_' or '-' (^[a-zA-Z0-9_-]{1,128}$). |
        | batch | [{"name": "record", "input_schema": {"type": "object"}}, {"name": "record", "input_schema": {"type": "object"}}] | tools.1.name | tools.1.name: 'record' names two tools; the API wants each tool's name unique.                                  |
        | batch | [{"name": "record"}]                                                                                   | tools.0.input_schema      | tools.0.input_schema: tool 'record' needs an input_schema, a JSON schema with "type": "object".                           |
        | live  | [{"name": "record", "input_schema": {"type": "array", "items": {"type": "number"}}}]                   | tools.0.input_schema.type | tools.0.input_schema.type: tool 'record' has an input_schema of type 'array'; the API accepts only a JSON schema with "type": "object". |
        | batch | [{"name": "record", "type": "custom", "input_schema": {"properties": {}}}]                             | tools.0.input_schema.type | tools.0.input_schema.type: tool 'record' has an input_schema of type None; the API accepts only a JSON schema with "type": "object". |

    Scenario Outline: A tool name of 1 to 128 allowed characters is accepted, and one of 129 is not
      Given an actor "recorder" in batch mode
      When the actor is asked "Record the tide" with a tool whose name is <length> characters long
      Then <outcome>

      Examples:
        | length | outcome                                           |
        | 1      | the answer is the emulated reply to "Record the tide" |
        | 128    | the answer is the emulated reply to "Record the tide" |
        | 129    | a ConfigurationError is raised                    |

    Scenario: A server tool needs no input schema of lowtide's: the API defines it
      Given an actor "researcher" in live mode
      When the actor is asked, in Python, with:
        """
        {"prompt": "Find the tide tables", "tools": [{"type": "web_search_20250305", "name": "web_search"}]}
        """
      Then the answer is the emulated reply to "Find the tide tables"
