Feature: Provider registry
  As a developer wiring an agent framework to model providers
  I want providers looked up by name and mode, and third-party providers plugged in through entry points
  So that an actor's configuration picks its provider without code changes, and a bad plugin is caught early

  Scenario: The default registry holds every built-in provider, loaded from the installed entry points
    Given the installed package declares the provider entry point "anthropic = lowtide.providers.anthropic:register"
    And the installed package declares the provider entry point "openai = lowtide.providers.openai:register"
    And the installed package declares the provider entry point "gemini = lowtide.providers.gemini:register"
    And the installed package declares the provider entry point "azure_openai = lowtide.providers.azure_openai:register"
    And the installed package declares the provider entry point "bedrock = lowtide.providers.bedrock:register"
    And the installed package declares the provider entry point "mistral = lowtide.providers.mistral:register"
    And the installed package declares the provider entry point "groq = lowtide.providers.groq:register"
    And the installed package declares the provider entry point "together = lowtide.providers.together:register"
    And the installed package declares the provider entry point "openai_compatible = lowtide.providers.openai_compatible.endpoint:register"
    And the installed package declares the provider entry point "xai = lowtide.providers.xai:register"
    And the installed package declares the provider entry point "openrouter = lowtide.providers.openrouter:register"
    And the installed package declares the provider entry point "fireworks = lowtide.providers.fireworks:register"
    And the installed package declares the provider entry point "vertex = lowtide.providers.vertex:register"
    And the default provider registry
    Then the registry lists the providers "anthropic, azure_openai, bedrock, fireworks, gemini, groq, mistral, openai, openai_compatible, openrouter, together, vertex, vertex_claude, xai"
    And provider "anthropic" offers the modes "live, batch"
    And provider "openai" offers the modes "live, batch"
    And provider "gemini" offers the modes "live, batch"
    And provider "azure_openai" offers the modes "live, batch"
    And provider "bedrock" offers the modes "live, batch"
    And provider "mistral" offers the modes "live, batch"
    And provider "groq" offers the modes "live, batch"
    And provider "together" offers the modes "live, batch"
    And provider "openai_compatible" offers the modes "live, batch"
    And provider "xai" offers the modes "live, batch"
    And provider "openrouter" offers the modes "live, batch"
    And provider "fireworks" offers the modes "live, batch"
    And provider "vertex" offers the modes "live, batch"
    And provider "vertex_claude" offers the modes "live, batch"
    When "anthropic" is looked up in live mode
    Then the lookup gives ClaudeProvider in live mode
    When "anthropic" is looked up in batch mode
    Then the lookup gives ClaudeBatchProvider in batch mode
    When "openai" is looked up in live mode
    Then the lookup gives OpenAIProvider in live mode
    When "openai" is looked up in batch mode
    Then the lookup gives OpenAIBatchProvider in batch mode
    When "gemini" is looked up in live mode
    Then the lookup gives GeminiProvider in live mode
    When "gemini" is looked up in batch mode
    Then the lookup gives GeminiBatchProvider in batch mode
    When "azure_openai" is looked up in live mode
    Then the lookup gives AzureOpenAIProvider in live mode
    When "azure_openai" is looked up in batch mode
    Then the lookup gives AzureOpenAIBatchProvider in batch mode
    When "bedrock" is looked up in live mode
    Then the lookup gives BedrockProvider in live mode
    When "bedrock" is looked up in batch mode
    Then the lookup gives BedrockBatchProvider in batch mode
    When "mistral" is looked up in live mode
    Then the lookup gives MistralProvider in live mode
    When "mistral" is looked up in batch mode
    Then the lookup gives MistralBatchProvider in batch mode
    When "groq" is looked up in live mode
    Then the lookup gives GroqProvider in live mode
    When "groq" is looked up in batch mode
    Then the lookup gives GroqBatchProvider in batch mode
    When "together" is looked up in live mode
    Then the lookup gives TogetherProvider in live mode
    When "together" is looked up in batch mode
    Then the lookup gives TogetherBatchProvider in batch mode
    And the default provider registry is built only once

  Scenario: A fresh registry loads the installed plugins on request
    Given an empty provider registry
    When the installed provider plugins are loaded into the registry
    Then the plugins loaded are "anthropic, azure_openai, bedrock, fireworks, gemini, groq, mistral, openai, openai_compatible, openrouter, together, vertex, vertex_claude, xai"
    And the registry lists the providers "anthropic, azure_openai, bedrock, fireworks, gemini, groq, mistral, openai, openai_compatible, openrouter, together, vertex, vertex_claude, xai"

  Scenario: A misspelt provider name gets a did-you-mean suggestion
    Given the default provider registry
    When "antropic" is looked up in live mode
    Then a ProviderNotFoundError is raised
    And the error message is:
      """
      No provider named 'antropic'. Did you mean 'anthropic'? Registered providers: 'anthropic', 'azure_openai', 'bedrock', 'fireworks', 'gemini', 'groq', 'mistral', 'openai', 'openai_compatible', 'openrouter', 'together', 'vertex', 'vertex_claude', 'xai'.
      """
    And the error names the field "provider"

  Scenario: A name like no registered provider gets the list of what is registered
    Given the default provider registry
    When "cohere" is looked up in batch mode
    Then a ProviderNotFoundError is raised
    And the error message does not contain "Did you mean"
    And the error message contains "Registered providers: 'anthropic', 'azure_openai', 'bedrock', 'fireworks', 'gemini', 'groq', 'mistral', 'openai', 'openai_compatible', 'openrouter', 'together', 'vertex', 'vertex_claude', 'xai'."

  Scenario: An empty registry says that nothing is registered
    Given an empty provider registry
    When "anthropic" is looked up in live mode
    Then a ProviderNotFoundError is raised
    And the error message contains "Registered providers: none."

  Scenario: A third-party provider registers through its entry point
    Given an empty provider registry
    When the entry point "echo = lowtide_echo_plugin:register" is loaded into the registry
    Then the plugins loaded are "echo"
    And the registry lists the providers "echo"
    And provider "echo" offers the modes "live"
    When "echo" is looked up in live mode
    Then the lookup gives EchoProvider in live mode

  Scenario: Plugins add to the built-ins, and several entry points load in one call
    Given an empty provider registry
    When the entry points "anthropic = lowtide.providers.anthropic:register, echo = lowtide_echo_plugin:register" are loaded into the registry
    Then the plugins loaded are "anthropic, echo"
    And the registry lists the providers "anthropic, echo"

  Scenario: A live-only provider asked for batch mode says so, and how to allow a live answer
    Given an empty provider registry
    And the entry point "echo = lowtide_echo_plugin:register" is loaded into the registry
    When "echo" is looked up in batch mode
    Then a ProviderCapabilityError is raised
    And the error message is:
      """
      Provider 'echo' does not support batch processing. Use batch_processing: live, or set fallback_to_live: true to answer through its live API.
      """
    And the error names the field "batch_processing"

  Scenario: A live-only provider asked for batch mode with fallback allowed answers live
    Given an empty provider registry
    And the entry point "echo = lowtide_echo_plugin:register" is loaded into the registry
    When "echo" is looked up in batch mode with fallback to live
    Then the lookup gives EchoProvider in live mode, having fallen back

  Scenario: A batch-only provider asked for live mode is refused, even with fallback allowed
    Given an empty provider registry
    And the entry point "nightly = lowtide_echo_plugin:register_nightly" is loaded into the registry
    When "nightly" is looked up in live mode with fallback to live
    Then a ProviderCapabilityError is raised
    And the error message is:
      """
      Provider 'nightly' does not support live mode.
      """

  Scenario Outline: A plugin that cannot load fails with an error naming it
    Given an empty provider registry
    When the entry point "<plugin> = <target>" is loaded into the registry
    Then a ConfigurationError is raised
    And the error message contains "Provider plugin '<plugin>' (<target>) failed to load: <cause>"
    And the error names the field "provider"
    And the registry lists no providers

    Examples:
      | plugin   | target                                  | cause                                                                   |
      | vendorx  | lowtide_broken_plugin:register          | ModuleNotFoundError: No module named 'lowtide_vendor_sdk_not_installed' |
      | ghost    | lowtide_plugin_never_installed:register | ModuleNotFoundError: No module named 'lowtide_plugin_never_installed'   |
      | typo     | lowtide_echo_plugin:regsiter            | AttributeError                                                          |
      | licensed | lowtide_echo_plugin:register_exploding  | RuntimeError: licence server unreachable                                |

  Scenario: A plugin claiming a name already taken fails with the registry's own message
    Given an empty provider registry
    And the entry point "echo = lowtide_echo_plugin:register" is loaded into the registry
    When the entry point "echo-fork = lowtide_echo_plugin:register_echo_again" is loaded into the registry
    Then a ConfigurationError is raised
    And the error message is:
      """
      A provider is already registered as 'echo' for live mode; pass replace=True to override it.
      """
    And the lookup of "echo" in live mode still gives EchoProvider

  Scenario: Registering a taken slot again needs replace=True
    Given an empty provider registry
    And the entry point "echo = lowtide_echo_plugin:register" is loaded into the registry
    When NightlyProvider is registered as "echo" for live mode
    Then a ConfigurationError is raised
    And the lookup of "echo" in live mode still gives EchoProvider
    When NightlyProvider is registered as "echo" for live mode with replace=True
    Then the lookup of "echo" in live mode now gives NightlyProvider
