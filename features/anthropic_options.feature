Feature: Anthropic's own settings live under provider_options.anthropic
  As a developer whose actors share defaults across providers
  I want the settings only Anthropic has (top_k, thinking, output_config, cache_control) under its name
  So that a neutral request holds neutral fields, and each provider reads its own settings and ignores the others'

  Background:
    Given an emulated Anthropic API

  Scenario: Settings under provider_options.anthropic reach the Messages API as its own parameters
    Given an actor "deep" with:
      """
      batch_processing: batch
      max_tokens: 2048
      provider_options:
        anthropic:
          top_k: 5
          thinking: {type: enabled, budget_tokens: 1024}
          cache_control: {type: ephemeral}
          output_config: {effort: low}
        openai: {endpoint: chat_completions}
      """
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the batch holds exactly the request "cron" with these params:
      """
      model: claude-sonnet-5-5
      max_tokens: 2048
      messages: [{role: user, content: Plan the cron move}]
      top_k: 5
      thinking: {type: enabled, budget_tokens: 1024}
      cache_control: {type: ephemeral}
      output_config: {effort: low}
      """

  Scenario: The top-level shorthand still works, and sends the same request
    Given an actor "deep" with:
      """
      batch_processing: batch
      max_tokens: 2048
      top_k: 5
      thinking: {type: enabled, budget_tokens: 1024}
      """
    When the actor is asked "Plan the cron move" with the key "cron"
    Then the batch holds exactly the request "cron" with these params:
      """
      model: claude-sonnet-5-5
      max_tokens: 2048
      messages: [{role: user, content: Plan the cron move}]
      top_k: 5
      thinking: {type: enabled, budget_tokens: 1024}
      """

  Scenario Outline: A setting given wrongly, or twice, is refused as the actor is configured, before anything is sent
    When an actor "deep" is configured with:
      """
      <settings>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<message>"
    And the API received no calls at all

    Examples:
      | settings                                                                                            | field                                 | message                                                                           |
      | {max_tokens: 2048, top_k: 5, provider_options: {anthropic: {top_k: 6}}}                             | provider_options.anthropic.top_k      | top_k is given twice, as top_k and as provider_options.anthropic.top_k; keep one. |
      | {max_tokens: 2048, provider_options: {anthropic: {top_k: 0}}}                                       | provider_options.anthropic.top_k      | Input should be greater than or equal to 1                                        |
      | {max_tokens: 2048, provider_options: {anthropic: {thinking: {type: enabled, budget_tokens: 4096}}}} | thinking.budget_tokens                | thinking.budget_tokens (4096) must be less than max_tokens (2048)                 |
      | {max_tokens: 2048, provider_options: {anthropic: {temprature: 1}}}                                  | provider_options.anthropic.temprature | extra_params                                                                      |
