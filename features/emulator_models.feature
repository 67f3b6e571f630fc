Feature: The emulator's Models API, and the models it serves
  As a developer testing against the emulator
  I want it to list and describe its models as the API does, and refuse a model it does not serve as the API does
  So that lowtide's checks of a model run offline exactly as they run against the real API

  Background:
    Given an emulated Anthropic API

  Rule: GET /v1/models lists the active and deprecated models, newest first, a page at a time

    Scenario: Pages of the list, forward with after_id and back with before_id
      When the models are listed 5 at a time
      Then the page lists "claude-fable-5-2, claude-mythos-5-2, claude-haiku-5-5, claude-sonnet-5-5, claude-fable-5-1", with more after it
      When the models are listed 5 at a time, after the last of the page
      Then the page lists "claude-opus-5-5, claude-mythos-5-1, claude-opus-5, claude-sonnet-5, claude-fable-5", with more after it
      When the models are listed 3 at a time, before the first of the page
      Then the page lists "claude-haiku-5-5, claude-sonnet-5-5, claude-fable-5-1", with more before it

    Scenario: The SDK walks the whole list, and each model is a ModelInfo
      When the models are listed through the SDK's pages, 7 at a time
      Then the models listed are, in order:
        """
        claude-fable-5-2, claude-mythos-5-2, claude-haiku-5-5, claude-sonnet-5-5, claude-fable-5-1, claude-opus-5-5,
        claude-mythos-5-1, claude-opus-5, claude-sonnet-5, claude-fable-5, claude-mythos-5, claude-opus-4-8,
        claude-opus-4-7, claude-sonnet-4-6, claude-opus-4-6, claude-opus-4-5-20251101, claude-haiku-4-5-20251001,
        claude-sonnet-4-5-20250929
        """
      And every model listed is the SDK's ModelInfo, newest first, with every capability
      And the API received these calls:
        | call        | count |
        | models.list | 3     |

    Scenario Outline: The list filtered by lifecycle
      When the models are listed with the lifecycles <lifecycles>
      Then the page lists "<models>", with nothing after it

      Examples:
        | lifecycles   | models                     |
        | ["retired"]    | claude-mythos-preview      |
        | ["deprecated"] | claude-opus-4-5-20251101, claude-sonnet-4-5-20250929 |

    Scenario: All three lifecycles list every model of the catalogue
      When the models are listed with the lifecycles ["active", "deprecated", "retired"]
      Then the page holds 19 models, with nothing after it

    Scenario Outline: A list request the API would refuse is refused the same way
      When the models endpoint is sent "<query>"
      Then the models endpoint answers 400 with "<message>"

      Examples:
        | query                                            | message                                                            |
        | /v1/models?limit=0                               | limit: Input should be between 1 and 1000                          |
        | /v1/models?limit=many                            | limit: Input should be a valid integer                             |
        | /v1/models?after_id=a&before_id=b                | Only one of after_id and before_id may be given.                   |
        | /v1/models?after_id=claude-nothing               | after_id: no model with id claude-nothing in this list             |
        | /v1/models?before_id=claude-mythos-preview       | before_id: no model with id claude-mythos-preview in this list     |
        | /v1/models?lifecycle[]=legacy                    | lifecycle: Input should be 'active', 'deprecated' or 'retired' (got 'legacy') |
        | /v1/models?lifecycle[]=active&lifecycle[]=retired&lifecycle=active&lifecycle=deprecated | lifecycle: List should have at most 3 items |

  Rule: GET /v1/models/{model_id} describes one model, found by id or alias

    Scenario Outline: A model described as the SDK's ModelInfo
      When the model "<name>" is retrieved
      Then the model is described with:
        | field            | value              |
        | id               | <id>               |
        | display_name     | <display name>     |
        | lifecycle        | <lifecycle>        |
        | max_tokens       | <max tokens>       |
        | max_input_tokens | <max input tokens> |
        | retires_at       | <retires at>       |

      Examples:
        | name                  | id                         | display name          | lifecycle  | max tokens | max input tokens | retires at                |
        | claude-sonnet-5-5     | claude-sonnet-5-5          | Claude Sonnet 5.5     | active     | 128000     | 1000000          |                           |
        | claude-sonnet-4-5     | claude-sonnet-4-5-20250929 | Claude Sonnet 4.5     | deprecated | 64000      | 200000           | 2026-11-30 00:00:00+00:00 |
        | claude-mythos-preview | claude-mythos-preview      | Claude Mythos Preview | retired    | 128000     | 1000000          | 2026-06-30 00:00:00+00:00 |

    Scenario: An unknown model is the API's 404
      When the model "claude-sonet-5-5" is retrieved
      Then the models endpoint call failed with NotFoundError, status 404, "not_found_error" and "model: claude-sonet-5-5"

    Scenario: The SDK's beta client reads the same models, from the same paths
      # anthropic 2.12's beta client marks its calls with a `beta` qualifier it does not send; earlier SDKs sent
      # `?beta=true`, which the emulator takes as well.
      When the model "claude-haiku-5-5" is retrieved through the beta client
      And the models are listed through the beta client, 20 at a time
      Then the model is described with:
        | field      | value            |
        | id         | claude-haiku-5-5 |
        | max_tokens | 128000           |
      And the beta page holds 18 models
      And the beta client called the same paths as the plain one, /v1/models/claude-haiku-5-5, /v1/models

    Scenario Outline: A request with ?beta=true is answered as the plain one
      When the models endpoint is sent "<query>"
      Then the models endpoint answers 200 with the models "<models>"

      Examples:
        | query                                      | models                             |
        | /v1/models?beta=true&limit=2               | claude-fable-5-2, claude-mythos-5-2 |
        | /v1/models/claude-haiku-4-5-20251001?beta=true | claude-haiku-4-5-20251001      |

    Scenario: Calls to the models endpoint are counted, and take faults like any route
      Given the API will fail the next "models.retrieve" call with status 529
      When the model "claude-sonnet-5-5" is retrieved
      Then the models endpoint call failed with OverloadedError, status 529, "overloaded_error" and "Overloaded"
      When the model "claude-sonnet-5-5" is retrieved
      Then the model is described with:
        | field | value             |
        | id    | claude-sonnet-5-5 |
      And the API received these calls:
        | call            | count |
        | models.retrieve | 2     |

  Rule: The catalogue is the installed SDK's models, plus the names a test adds

    Scenario: Every model of the catalogue is one the SDK names
      Then every model the emulator describes is named by the SDK's Model type, by its id or an alias

    Scenario: Extra models are served as active models, listed last, and answered
      Given an emulated Anthropic API that also serves the models "claude-unknown-9, claude-mythos-preview, claude-sonnet-5-5"
      When the models are listed 100 at a time
      Then the page holds 20 models, the last being "claude-unknown-9, claude-mythos-preview", with nothing after it
      When the model "claude-unknown-9" is retrieved
      Then the model is described with:
        | field        | value                     |
        | id           | claude-unknown-9          |
        | lifecycle    | active                    |
        | created_at   | 1970-01-01 00:00:00+00:00 |
        | max_tokens   | 128000                    |
      When the emulator is sent a message for the model "claude-unknown-9"
      Then the emulator answered the message

    Scenario Outline: A message for a model the emulator does not serve is the API's 404, live and in a batch
      When the emulator is sent a message for the model "<model>"
      Then the models endpoint call failed with NotFoundError, status 404, "not_found_error" and "model: <model>"
      When the emulator is sent a batch with a message for the model "<model>", which ends
      Then the batch's request errored with "not_found_error" and "model: <model>"

      Examples:
        | model                 |
        | claude-unknown-9      |
        | claude-mythos-preview |

    Scenario: max_tokens is checked against the model's own output limit
      When the emulator is sent a message for the model "claude-haiku-4-5" with max_tokens 64001
      Then the models endpoint call failed with BadRequestError, status 400, "invalid_request_error" and "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5"
      When the emulator is sent a message for the model "claude-haiku-4-5" with max_tokens 64000
      Then the emulator answered the message

    Scenario Outline: Extra models must be names
      When an emulator is made with the extra models <extra>
      Then making it failed with "extra_models must be model names (non-empty strings), e.g. ('claude-unknown-9',)"

      Examples:
        | extra                 |
        | "claude-unknown-9"    |
        | ("claude-a", "  ")    |
        | ("claude-a", 9)       |

    Scenario: `lowtide emulator --models` serves extra models, comma-separated or repeated
      When I run "lowtide emulator --port 0 --models claude-unknown-9,claude-unknown-10 --models claude-unknown-11" and list its models
      Then the command's emulator listed "claude-unknown-9, claude-unknown-10, claude-unknown-11" last
