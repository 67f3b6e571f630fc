Feature: What each provider's API would refuse of a request is refused before it is recorded or sent
  As a developer sending work to Anthropic or OpenAI, a call at a time or a hundred thousand at once
  I want text no API can take, a request over the API's size or the model's context window, an unknown model or a
    parameter out of its provider's range refused at once, naming the field
  So that a mistake costs me an error message, never a ledger entry, a batch, or a bill

  Rule: Text that is not valid Unicode is refused, wherever it is, naming where

    Scenario Outline: A lone surrogate in a <provider> call in <mode> mode is refused before anything is asked
      Given <provider>'s emulated API and an actor "scribe" in <mode> mode
      When the actor is asked, in Python, with:
        """
        <call>
        """
      Then a ConfigurationError is raised
      And the error names the field "<field>"
      And the error message contains "<field>: the text is not valid Unicode: a lone surrogate"
      And the API received no calls at all
      And the ledger holds no requests and no batches

      Examples:
        | provider  | mode  | call                                                                                                       | field                     |
        | Anthropic | live  | {"prompt": "Tide at x \ud800"}                                                                             | prompt                    |
        | Anthropic | batch | {"prompt": "Tide at x \ud800"}                                                                             | prompt                    |
        | Anthropic | batch | {"prompt": "Hi", "system": "Be \udfff brief"}                                                              | system                    |
        | Anthropic | live  | {"prompt": "Hi", "metadata": {"user_id": "u \ud800"}}                                                      | metadata.user_id          |
        | OpenAI    | live  | {"messages": [{"role": "user", "content": [{"type": "text", "text": "ok \ud83d"}]}]}                       | messages.0.content.0.text |
        | OpenAI    | batch | {"prompt": "Tide at x \ud800"}                                                                             | prompt                    |
        | OpenAI    | batch | {"prompt": "Hi", "tools": [{"name": "log", "description": "x \ud800", "input_schema": {"type": "object"}}]} | tools.0.description       |

    Scenario Outline: A <provider> bulk run (<mode>) with a lone surrogate in one job is refused naming the job, and not recorded
      Given <provider>'s emulated API and an actor "reader" in batch mode
      When the actor maps, <mode>, in Python:
        """
        ["Fine", "Broken \ud800 text", {"messages": [{"role": "user", "content": "also \udc00"}]}]
        """
      Then a ConfigurationError is raised
      And the error message contains "Job 1: prompt: the text is not valid Unicode: a lone surrogate (U+D800) at character 7"
      And the ledger has no run
      And the API received no calls at all

      Examples:
        | provider  | mode  |
        | Anthropic | batch |
        | Anthropic | live  |
        | OpenAI    | batch |
        | OpenAI    | live  |

  Rule: A request is within the API's size limit for one request

    Scenario Outline: A <provider> request larger than the API takes in one request is refused, nothing sent
      Given <provider>'s emulated API and an actor "scribe" in live mode
      When the actor is asked a prompt of <thousands> thousand characters
      Then a ConfigurationError is raised
      And the error names the field "messages.0"
      And the error message contains "<limit>"
      And the API was asked nothing but look-ups
      And the API counted tokens 0 times
      And the ledger holds no requests and no batches

      Examples:
        | provider  | thousands | limit                                                |
        | Anthropic | 34000     | the Messages API takes at most 32.0 MiB in one request |
        | OpenAI    | 53000     | OpenAI takes at most 50.0 MiB in one request          |

    Scenario Outline: A <provider> request larger than a batch may hold is refused in batch mode, before it is recorded
      Given <provider>'s emulated API and an actor "scribe" in batch mode, with:
        """
        batch: {max_batch_bytes: 2000000}
        """
      When the actor is asked a prompt of 2100 thousand characters
      Then a ConfigurationError is raised
      And the error message contains "a batch (batch.max_batch_bytes) takes at most 1.9 MiB in one request"
      And the API was asked nothing but look-ups
      And the ledger holds no requests and no batches

      Examples:
        | provider  |
        | Anthropic |
        | OpenAI    |

    Scenario Outline: A <provider> bulk run with one job larger than a batch may hold is refused naming the job, and not recorded
      Given <provider>'s emulated API and an actor "reader" in batch mode, with:
        """
        batch: {max_batch_bytes: 2000000}
        """
      When the actor maps three prompts, batched, the second of 2100 thousand characters
      Then a ConfigurationError is raised
      And the error message contains "Job 1 is about"
      And the error message contains "bytes as a batch request, more than a batch may hold (2,000,000)"
      And the ledger has no run
      And the API received no calls at all

      Examples:
        | provider  |
        | Anthropic |
        | OpenAI    |

  Rule: A request's input tokens are within the model's context window, counted by the API only when they may not be

    Scenario Outline: A <provider> prompt beyond the model's context window is refused in <mode> mode after one count
      Given <provider>'s emulated API and an actor "scribe" in <mode> mode
      When the actor is asked a prompt of <thousands> thousand characters
      Then a ConfigurationError is raised
      And the error names the field "messages.0"
      And the error message contains "input tokens; '<model>' reads at most <window> (its context window)"
      And the API was asked nothing but look-ups
      And the API counted tokens 1 time
      And the ledger holds no requests and no batches

      Examples:
        | provider  | mode  | thousands | model            | window  |
        | Anthropic | live  | 1000      | claude-haiku-4-5 | 200,000 |
        | Anthropic | batch | 1000      | claude-haiku-4-5 | 200,000 |
        | OpenAI    | live  | 1200      | gpt-5.4-mini     | 272,000 |
        | OpenAI    | batch | 1200      | gpt-5.4-mini     | 272,000 |

    Scenario Outline: A long <provider> prompt within the window is counted once, then sent (<mode>)
      Given <provider>'s emulated API and an actor "scribe" in <mode> mode
      When the actor is asked a prompt of <thousands> thousand characters
      Then the answer is the emulated reply to a long prompt
      And the API counted tokens 1 time

      Examples:
        | provider  | mode  | thousands |
        | Anthropic | live  | 600       |
        | Anthropic | batch | 600       |
        | OpenAI    | live  | 800       |
        | OpenAI    | batch | 800       |

    Scenario Outline: Ordinary <provider> prompts in <mode> mode are checked without counting their tokens
      Given <provider>'s emulated API and an actor "scribe" in <mode> mode
      When the actor is asked 5 prompts at once
      And the actor is asked "Plan issue 42"
      Then the answer is the emulated reply to "Plan issue 42"
      And the API counted tokens 0 times

      Examples:
        | provider  | mode  |
        | Anthropic | live  |
        | Anthropic | batch |
        | OpenAI    | live  |
        | OpenAI    | batch |

    Scenario Outline: A <provider> bulk run of ordinary prompts counts no tokens (<how>)
      Given <provider>'s emulated API and an actor "reader" in batch mode
      When the actor maps 40 short prompts, <how>
      Then the run's 40 items were answered
      And the API counted tokens 0 times

      Examples:
        | provider  | how     |
        | Anthropic | batched |
        | Anthropic | live    |
        | OpenAI    | batched |
        | OpenAI    | live    |

    Scenario Outline: A <provider> bulk run (<how>) with one job beyond the window is refused naming the job, and not recorded
      Given <provider>'s emulated API and an actor "reader" in batch mode
      When the actor maps three prompts, <how>, the second of <thousands> thousand characters
      Then a ConfigurationError is raised
      And the error message contains "Job 1: messages.0: the request holds"
      And the error message contains "'<model>' reads at most <window> (its context window)"
      And the ledger has no run
      And the API was asked nothing but look-ups
      And the API counted tokens 1 time

      Examples:
        | provider  | how     | thousands | model            | window  |
        | Anthropic | batched | 1000      | claude-haiku-4-5 | 200,000 |
        | Anthropic | live    | 1000      | claude-haiku-4-5 | 200,000 |
        | OpenAI    | batched | 1200      | gpt-5.4-mini     | 272,000 |
        | OpenAI    | live    | 1200      | gpt-5.4-mini     | 272,000 |

    Scenario Outline: A <provider> run_many with one prompt beyond the window is refused before anything is sent
      Given <provider>'s emulated API and an actor "scribe" in batch mode
      When the actor runs three prompts with run_many, the second of <thousands> thousand characters
      Then a ConfigurationError is raised
      And the error message contains "(its context window)"
      And the API was asked nothing but look-ups
      And the ledger holds no requests and no batches

      Examples:
        | provider  | thousands |
        | Anthropic | 1000      |
        | OpenAI    | 1200      |

    Scenario Outline: When <provider>'s token counting cannot be reached, a long prompt is sent, and the API's own refusal comes back
      Given <provider>'s emulated API, whose <path> refuses connections, and an actor "scribe" in live mode
      And the warnings of "<logger>" are kept
      When the actor is asked a prompt of <thousands> thousand characters
      Then an InvalidRequestError is raised
      And the error message contains "<refusal>"
      And "<logger>" warned once: "The token counting of http://emulator.invalid<base> cannot be reached (APIConnectionError): input tokens are not checked before sending."

      Examples:
        | provider  | path                      | thousands | logger                              | base | refusal                                           |
        | Anthropic | /v1/messages/count_tokens | 1000      | lowtide.providers.anthropic.checks | | prompt is too long: 250000 tokens > 200000 maximum |
        | OpenAI    | /v1/responses/input_tokens | 1200     | lowtide.providers.openai.checks    | /v1 | Your input exceeds the context window of this model |

  Rule: An OpenAI actor's model is one the API serves, as its models endpoint says

    Scenario Outline: A misspelt OpenAI model is refused in <mode> mode with the closest names, nothing recorded or sent
      Given OpenAI's emulated API and an actor "planner" in <mode> mode, with:
        """
        model: <model>
        """
      When the actor is asked "Plan issue 42"
      Then a ConfigurationError is raised
      And the error names the field "model"
      And the error message is:
        """
        model: the API at http://emulator.invalid/v1 has no model '<model>'. Did you mean <suggestions>?
        """
      And the API received only these calls:
        | call                   | count |
        | openai.models.retrieve | 1     |
        | openai.models.list     | 1     |
      And the ledger holds no requests and no batches

      Examples:
        | mode  | model        | suggestions                                      |
        | live  | gpt-5.4-mnii | 'gpt-5.4-mini', 'gpt-5.1-mini' or 'gpt-5-mini'   |
        | batch | gpt-5.4-mnii | 'gpt-5.4-mini', 'gpt-5.1-mini' or 'gpt-5-mini'   |
        | batch | gpt-nope-9   | 'gpt-4o' or 'gpt-5-nano'                         |

    Scenario Outline: An OpenAI bulk run (<mode>) naming a model the API does not serve is refused before it is recorded
      Given OpenAI's emulated API and an actor "reader" in batch mode, with:
        """
        model: gpt-nope-9
        """
      When the actor maps, <mode>, in Python:
        """
        ["Review 0", "Review 1"]
        """
      Then a ConfigurationError is raised
      And the error message contains "Job 0: model: the API at http://emulator.invalid/v1 has no model 'gpt-nope-9'. Did you mean 'gpt-4o' or 'gpt-5-nano'?"
      And the ledger has no run
      And the API was asked nothing but look-ups

      Examples:
        | mode  |
        | batch |
        | live  |

    Scenario: Concurrent calls and actors on one OpenAI client share one look-up of the model
      Given OpenAI's emulated API and an actor "scribe" in batch mode
      When the actor is asked 5 prompts at once
      And the actor is asked "Plan issue 42"
      Then the API received these calls:
        | call                   | count |
        | openai.models.retrieve | 1     |
        | openai.models.list     | 0     |

    Scenario: With OpenAI's models endpoint out of reach, the model is not checked, that is logged once, and calls go on
      Given OpenAI's emulated API, whose /v1/models refuses connections, and an actor "scribe" in live mode
      And the warnings of "lowtide.providers.openai.checks" are kept
      When the actor is asked "One"
      And the actor is asked "Two"
      Then the answer is the emulated reply to "Two"
      And "lowtide.providers.openai.checks" warned once: "The models endpoint of http://emulator.invalid/v1 cannot be reached (APIConnectionError): model names are not checked before sending."

    Scenario Outline: A model the API serves but no price is known for costs "unknown", never $0 (<mode>)
      Given OpenAI's emulated API and an actor "scout" in <mode> mode, with:
        """
        model: gpt-6.2-astra
        """
      When the actor is asked "Scan the harbour logs"
      Then the answer's cost is unknown
      When the actor maps 3 short prompts, <how>
      Then the run's summary says "unknown at <prices> prices"
      And the run's summary says "no price is known for 3 answer(s)"

      Examples:
        | mode  | how     | prices |
        | batch | batched | batch  |
        | live  | live    | live   |

  Rule: Each provider's parameters are checked by its own rules, as the actor loads and on every call

    Scenario Outline: A valid OpenAI temperature of 1.7 is accepted and sent (<mode>)
      Given OpenAI's emulated API and an actor "poet" in <mode> mode, with:
        """
        temperature: 1.7
        """
      When the actor is asked "Write about the tide"
      Then the answer is the emulated reply to "Write about the tide"
      And the API was sent temperature = 1.7

      Examples:
        | mode  |
        | live  |
        | batch |

    Scenario Outline: A <provider> parameter its API would refuse is refused as the actor loads, naming the field
      Given <provider>'s emulated API
      When a <provider> actor "writer" is configured with:
        """
        <settings>
        """
      Then a ConfigurationError is raised
      And the error names the field "<field>"
      And the error message contains "Invalid configuration for actor 'writer'"
      And the error message contains "<message>"
      And the API received no calls at all

      Examples:
        | provider  | settings                                                           | field                  | message                                                                  |
        | Anthropic | temperature: 1.7                                                   | temperature            | temperature: 1.7 is outside the range the Messages API takes, 0 to 1.    |
        | Anthropic | top_p: 1.2                                                         | top_p                  | top_p: 1.2 is outside the range the Messages API takes, 0 to 1.          |
        | Anthropic | top_k: 0                                                           | top_k                  | top_k: 0 is less than 1, the least the Messages API takes.               |
        | Anthropic | stop_sequences: ["END", "  "]                                      | stop_sequences.1       | stop_sequences.1: the stop sequence is only whitespace                   |
        | Anthropic | metadata: {team: harbour}                                          | metadata.team          | metadata.team: the Messages API's metadata holds user_id alone           |
        | Anthropic | {max_tokens: 2000, thinking: {type: enabled, budget_tokens: 512}}  | thinking.budget_tokens | thinking.budget_tokens must be an integer of at least 1024               |
        | OpenAI    | temperature: 2.5                                                   | temperature            | temperature: 2.5 is outside the range OpenAI takes, 0 to 2.              |
        | OpenAI    | top_p: 1.5                                                         | top_p                  | top_p: 1.5 is outside the range OpenAI takes, 0 to 1.                    |
        | OpenAI    | top_k: 5                                                           | top_k                  | top_k cannot be sent to OpenAI                                           |
        | OpenAI    | {stop_sequences: [""], provider_options: {openai: {endpoint: chat_completions}}}     | stop_sequences.0 | stop_sequences.0: the stop sequence is empty; OpenAI refuses it. |
        | OpenAI    | {stop_sequences: [END, END], provider_options: {openai: {endpoint: chat_completions}}} | stop_sequences.1 | stop_sequences.1: 'END' is given twice                          |
        | OpenAI    | {max_tokens: 10}                                                   | max_tokens             | max_tokens is 10; the Responses API needs at least 16.                   |
        | OpenAI    | {batch_processing: batch, stop_sequences: [END]}                   | stop_sequences         | stop_sequences: the Responses API has none, and lowtide applies them to live answers only |

    Scenario: An OpenAI actor file with a temperature out of OpenAI's range fails at load, naming the actor, the file and the field
      Given a file "actors.yaml" containing:
        """
        actors:
          - {name: poet, provider: openai, model: gpt-5.4-mini, temperature: 1.7}
          - {name: wild, provider: openai, model: gpt-5.4-mini, temperature: 2.4}
        """
      When the actors are loaded from "actors.yaml"
      Then a ConfigurationError is raised
      And the error message contains "Invalid configuration for actor 'wild' in "
      And the error message contains "actors.yaml"
      And the error message contains "temperature: 2.4 is outside the range OpenAI takes, 0 to 2."
      And the error names the field "temperature"

    Scenario Outline: A <provider> call's own parameter out of range is refused in <mode> mode before anything is sent
      Given <provider>'s emulated API and an actor "writer" in <mode> mode
      When the actor is asked "Write the harbour's history" with:
        """
        <arguments>
        """
      Then a ConfigurationError is raised
      And the error names the field "<field>"
      And the API received no calls at all
      And the ledger holds no requests and no batches

      Examples:
        | provider  | mode  | arguments                                                                | field            |
        | Anthropic | live  | temperature: 1.5                                                         | temperature      |
        | Anthropic | batch | temperature: 1.5                                                         | temperature      |
        | Anthropic | batch | stop_sequences: [""]                                                     | stop_sequences.0 |
        | OpenAI    | live  | temperature: 2.5                                                         | temperature      |
        | OpenAI    | batch | top_p: -0.1                                                              | top_p            |
        | OpenAI    | batch | {stop_sequences: [""], provider_options: {openai: {endpoint: chat_completions}}} | stop_sequences.0 |

    Scenario Outline: A <provider> bulk job (<mode>) whose parameter is out of range is refused naming the job, and not recorded
      Given <provider>'s emulated API and an actor "reader" in batch mode
      When the actor maps, <mode>, in Python:
        """
        ["Review 0", {"prompt": "Review 1", "temperature": <temperature>}]
        """
      Then a ConfigurationError is raised
      And the error message contains "Job 1"
      And the error message contains "temperature: <temperature> is outside the range"
      And the ledger has no run

      Examples:
        | provider  | mode  | temperature |
        | Anthropic | batch | 1.5         |
        | Anthropic | live  | 1.5         |
        | OpenAI    | batch | 2.5         |
        | OpenAI    | live  | 2.5         |

  Rule: The emulator refuses what the APIs refuse, in each API's shape

    Scenario: A Messages request beyond the model's context window is refused as the API does
      Given Anthropic's emulated API
      When the emulator is sent a Messages request of 1000 thousand characters for "claude-haiku-4-5"
      Then the emulator refused it with status 400 and the message "prompt is too long: 250000 tokens > 200000 maximum"

    Scenario: A Responses request beyond the model's context window is refused as OpenAI does
      Given OpenAI's emulated API
      When the emulator is sent a Responses request of 1200 thousand characters for "gpt-5.4-mini"
      Then the emulator refused it with status 400, code "context_length_exceeded" and param "input"

    Scenario: A Chat Completions request beyond the model's context window is refused as OpenAI does
      Given OpenAI's emulated API
      When the emulator is sent a Chat Completions request of 1200 thousand characters for "gpt-5.4-mini"
      Then the emulator refused it with status 400, code "context_length_exceeded" and param "messages"
      And the emulator refused it with status 400 and the message "This model's maximum context length is 272000 tokens. However, your messages resulted in 300000 tokens."

    Scenario: OpenAI's token counting counts what a Responses call with the same input reports
      Given OpenAI's emulated API
      When the emulator's OpenAI token counting is asked for the Responses request "Is the harbour open tonight?" to "gpt-5.4-mini"
      Then the count is the input tokens a Responses call with that prompt reports

    Scenario: OpenAI's models endpoint describes the models the account may use, in OpenAI's shape
      Given OpenAI's emulated API
      When the emulator's OpenAI API is asked for the model "gpt-5.4-mini"
      Then the model "gpt-5.4-mini" is described as OpenAI describes a model
      When the emulator's OpenAI API is asked for its models
      Then the models listed include "gpt-5.4-mini" and "text-embedding-3-small", and no Claude model
      When the emulator's OpenAI API is asked for the model "gpt-nope-9"
      Then the emulator refused it with status 404, code "model_not_found" and param "model"
