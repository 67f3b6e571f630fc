Feature: Any OpenAI-compatible batch endpoint, configured by data
  As a developer whose models sit behind an OpenAI-compatible gateway (DeepInfra, a LiteLLM proxy, my own)
  I want `provider: openai_compatible` with its base URL, key variable, models, prices and missing parts in YAML
  So that it runs live and in batch mode with the same ledger and exactly-once create as a built-in provider

  Every call goes through the unmodified openai SDK, built by lowtide from the actor's settings (the base URL below,
  the key from COMPAT_KEY), to the emulator's OpenAI wire in process; the emulator is told which parts the endpoint
  lacks (`compatible_lacks`), as `lowtide emulator --compatible-lacks` is.

  Scenario Outline: The issue's actor answers concurrent calls in one batch, priced at its configured prices (<dialect>)
    Given an emulated OpenAI-compatible endpoint lacking "<lacks>"
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options:
        openai_compatible:
          base_url: "http://127.0.0.1:8765/v1"
          api_key_env: COMPAT_KEY
          lacks: [<lacks>]
          prices: {gpt-4o-mini: {input: 0.15, output: 0.6, batch_discount: 0.5}}
      """
    When the actor is asked these prompts at once:
      | prompt             | key  |
      | When is high tide? | high |
      | When is low tide?  | low  |
    Then every call was answered with the emulated reply to its prompt
    And the answers came in batches of 2
    And the OpenAI API was sent each of these requests once: high, low
    And every answer was priced at the configured prices, half of 0.15 and 0.6 a million tokens
    And the batch's metadata <metadata>
    And the API received these calls:
      | call                        | count    |
      | openai.files.create         | 1        |
      | openai.batches.create       | 1        |
      | openai.files.delete         | 1        |
      | openai.models.retrieve      | <models> |

    Examples:
      | dialect                    | lacks          | metadata                     | models |
      | full                       |                | names lowtide's intent id    | 1      |
      | no metadata                | metadata       | is empty                     | 1      |
      | no models list, no cancel  | models, cancel | names lowtide's intent id    | 0      |

  Scenario Outline: A create whose answer is lost is found again, never sent twice (<dialect>)
    Given an emulated OpenAI-compatible endpoint lacking "<lacks>"
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [<lacks>]}}
      """
    And the endpoint will commit the next batch but drop the connection before answering
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count   |
      | openai.batches.create | 1       |
      | openai.batches.list   | 1       |
      | openai.files.list     | <files> |

    Examples:
      | dialect                   | lacks          | files |
      | full                      |                | 0     |
      | no metadata, by its file  | metadata       | 1     |

  Scenario: A create the endpoint answered with a server error, and never made, is looked for at each poll of the grace period (0, 30 and 60 s), then made from the file uploaded
    Given an emulated OpenAI-compatible endpoint lacking "metadata"
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [metadata]}}
      """
    And the endpoint will fail the next batch create with status 500
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the OpenAI API was sent each of these requests once: high
    And the API received these calls:
      | call                  | count |
      | openai.files.create   | 1     |
      | openai.batches.create | 2     |
      | openai.files.list     | 3     |
      | openai.batches.list   | 3     |
      | openai.files.retrieve | 1     |

  Scenario: A dry run prices the run at the configured batch prices, sending nothing
    Given an emulated OpenAI-compatible endpoint lacking "models"
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options:
        openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [models], prices: {gpt-4o-mini: {input: 0.15, output: 0.6}}}
      """
    And 4 prompts "Review {n}"
    When the endpoint's actor plans a run of the prompts
    Then the plan's cost range is above nothing, at most 4 worst cases at the configured batch prices
    And the API received no calls at all

  Scenario: `lowtide emulator` refuses to switch off a part of OpenAI's wire an endpoint cannot lack, before it listens
    When `lowtide emulator --compatible-lacks metadata,files --port 0` is run in process
    Then the command exits with 2
    And the command printed on stderr "Invalid value for '--compatible-lacks'"
    And the command printed on stderr "any of cancel, metadata, models"

  Scenario: A model the endpoint has no price for is answered with its cost unknown, never $0, live or batch
    Given an emulated OpenAI-compatible endpoint lacking ""
    And an OpenAI-compatible actor "compat" with:
      """
      batch_processing: live
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY}}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And the answer's cost is unknown
    And the API received these calls:
      | call                           | count |
      | openai.chat.completions.create | 1     |

  Scenario: A live call is priced at the configured live price, and the key never reaches the stored answer
    Given an emulated OpenAI-compatible endpoint lacking "models"
    And an OpenAI-compatible actor "compat" with:
      """
      batch_processing: live
      provider_options:
        openai_compatible:
          base_url: "http://127.0.0.1:8765/v1"
          api_key_env: COMPAT_KEY
          lacks: [models]
          prices: {gpt-4o-mini: {input: 0.15, output: 0.6}}
      """
    When the actor is asked "When is high tide?" with the key "high"
    Then the answer is the emulated reply to "When is high tide?"
    And every answer was priced at the configured live prices, 0.15 and 0.6 a million tokens
    And the ledger file does not contain the key

  Scenario: A live call's own budget is kept at the configured live prices: one within it is answered, one over it refused unsent
    Given an emulated OpenAI-compatible endpoint lacking "models"
    And an OpenAI-compatible actor "compat" with:
      """
      batch_processing: live
      max_tokens: 1000
      provider_options:
        openai_compatible:
          base_url: "http://127.0.0.1:8765/v1"
          api_key_env: COMPAT_KEY
          lacks: [models]
          prices: {gpt-4o-mini: {input: 0.15, output: 0.6}}
      """
    When the endpoint's actor is asked "When is high tide?" live with a budget of 0.9 times its worst case at the configured live prices
    Then the call fails with BudgetExceededError
    And the budget error's worst case is that at the configured live prices
    When the endpoint's actor is asked "When is high tide?" live with a budget of 1.1 times its worst case at the configured live prices
    Then every answer was priced at the configured live prices, 0.15 and 0.6 a million tokens
    And the API received these calls:
      | call                           | count |
      | openai.chat.completions.create | 1     |

  Scenario Outline: A bad setting is refused with a clear error before anything is sent (<what>)
    Given an emulated OpenAI-compatible endpoint lacking "models"
    When an OpenAI-compatible actor "bad" is asked a question with:
      """
      <settings>
      """
    Then a ConfigurationError is raised
    And the error message contains "<says>"
    And the API received no calls at all

    Examples:
      | what                        | settings                                                                                                            | says                                                  |
      | no base_url                 | provider_options: {openai_compatible: {api_key_env: COMPAT_KEY}}                                                    | provider_options.openai_compatible.base_url           |
      | a base_url that is no URL   | provider_options: {openai_compatible: {base_url: "127.0.0.1:8765", api_key_env: COMPAT_KEY}}                        | provider_options.openai_compatible.base_url           |
      | the key variable unset      | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: UNSET_COMPAT_KEY}}        | set the UNSET_COMPAT_KEY environment variable         |
      | a model not in its list     | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, models: [gpt-4o-mini-2024-07-18, gpt-4.1]}} | Did you mean 'gpt-4o-mini-2024-07-18'? |
      | a part it cannot lack       | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [files]}} | provider_options.openai_compatible.lacks              |
      | a key where its variable goes | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: "sk-live 123"}}          | api_key_env names an environment variable             |
      | an empty models list        | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, models: []}}   | leave it out to ask the endpoint                      |
      | a negative price            | provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, prices: {gpt-4o-mini: {input: -1, output: 1}}}} | provider_options.openai_compatible.prices |

  Scenario: A model its models endpoint does not list is refused naming the closest it does, before the call is recorded
    Given an emulated OpenAI-compatible endpoint lacking ""
    When an OpenAI-compatible actor "typo" is asked a question with:
      """
      model: gpt-4o-mni
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY}}
      """
    Then a ConfigurationError is raised
    And the error message contains "Did you mean 'gpt-4o-mini'"
    And the API received these calls:
      | call                  | count |
      | openai.models.list    | 1     |
      | openai.files.create   | 0     |
      | openai.batches.create | 0     |

  Scenario Outline: A batch is canceled where the endpoint can; where it cannot, the cancel is refused saying so, unsent (<dialect>)
    Given an emulated OpenAI-compatible endpoint lacking "<lacks>" whose batches take 600 seconds
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [<lacks>], owner: My gateway}}
      """
    When the actor parks "When is high tide?" with the key "high"
    And its batch is canceled through the actor's backend
    Then <outcome>
    And the API received these calls:
      | call                  | count     |
      | openai.batches.cancel | <cancels> |

    Examples:
      | dialect   | lacks  | outcome                                                                 | cancels |
      | full      |        | the batch is being canceled                                             | 1       |
      | no cancel | cancel | the error message contains "My gateway at http://127.0.0.1:8765/v1 cannot cancel a batch" | 0       |

  Scenario: `lowtide cancel` reaches the endpoint from what the ledger recorded alone, with no actor file
    Given an emulated OpenAI-compatible endpoint lacking "" whose batches take 600 seconds
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY}}
      """
    When the actor parks "When is high tide?" with the key "high"
    And lowtide cancels the key "high" from the ledger alone
    Then the ledger's batch is canceling
    And the API received these calls:
      | call                  | count |
      | openai.batches.cancel | 1     |

  Scenario: A bulk run's cost limit is kept at the configured batch prices: one worst case more than was spent, never two
    Given an emulated OpenAI-compatible endpoint lacking ""
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options:
        openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, prices: {gpt-4o-mini: {input: 0.15, output: 0.6}}}
      """
    And 9 prompts "Review {n}"
    When the endpoint's actor maps the prompts, 3 items per batch, a cost limit of 1.5 items' worst case
    Then the run's groups are 9 completed, 0 failed, 0 canceled and 0 not run
    And the run spent less than its cost limit, at the configured batch prices
    And the API received these calls:
      | call                  | count |
      | openai.batches.create | 9     |

  Scenario: A cost limit on a model the endpoint has no price for is refused before anything is sent
    Given an emulated OpenAI-compatible endpoint lacking "models"
    And an OpenAI-compatible actor "compat" with:
      """
      provider_options: {openai_compatible: {base_url: "http://127.0.0.1:8765/v1", api_key_env: COMPAT_KEY, lacks: [models]}}
      """
    And 3 prompts "Review {n}"
    When the endpoint's actor maps the prompts with a cost limit of 1 dollars
    Then a ConfigurationError is raised
    And the error message contains "no price is known for model 'gpt-4o-mini', so the cost limit cannot be kept"
    And the API received no calls at all
