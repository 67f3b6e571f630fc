Feature: An actor answered by Azure OpenAI's live Chat Completions, and the emulated Azure API
  As a developer whose agent runs on an Azure OpenAI deployment
  I want `provider: azure_openai` to answer calls at my deployment through the official SDK's AsyncAzureOpenAI
  So that my agent gets the same ActorResponse as with any provider, at Azure's prices, and my tests run offline

  Background:
    Given an emulated Azure OpenAI API

  Scenario: A live call goes to the deployment and is answered by the model it serves, at Azure's live prices
    Given an Azure OpenAI actor "chatter" with:
      """
      system_prompt: You answer in one line.
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the response has these fields:
      | field        | value                  |
      | model        | gpt-4o-mini-2024-07-18 |
      | provider     | azure_openai           |
      | mode         | live                   |
      | stop_reason  | end_turn               |
      | cost.pricing | live                   |
    And the API received these calls:
      | call                                 | count |
      | azure_openai.chat.completions.create | 1     |

  Scenario: A 429 from the deployment is waited out as it asks, then the call is answered
    Given the API will fail the next "azure_openai.chat.completions.create" call with status 429 and retry-after 2
    And an Azure OpenAI actor "chatter" with:
      """
      {}
      """
    When the actor is asked "Is the harbour open?"
    Then the answer is the emulated reply to "Is the harbour open?"
    And the API received these calls:
      | call                                 | count |
      | azure_openai.chat.completions.create | 2     |

  Scenario: A deployment the resource lacks is Azure's DeploymentNotFound, raised as the call's error
    Given the deployment "tide-batch" is not in the Azure resource
    And an Azure OpenAI actor "chatter" with:
      """
      {}
      """
    When the actor is asked "Is the harbour open?"
    Then a NotFoundError is raised

  Scenario Outline: Bad settings are refused before anything is sent
    When an Azure OpenAI actor "wrong" is configured with:
      """
      <setting>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the API received no calls at all

    Examples:
      | setting                                                     | field                                  |
      | temperature: 3                                              | temperature                            |
      | provider_options: {azure_openai: {api_version: yesterday}} | provider_options.azure_openai.api_version |
      | provider_options: {azure_openai: {verbosity: loud}}         | provider_options.azure_openai.verbosity |

  Scenario Outline: Without <missing>, the actor says which variable to set, before anything is sent
    Given an Azure OpenAI actor "bare" with no client, the key in "<key>" and the endpoint in "<endpoint>"
    When the actor is asked "Hello"
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<variable>"
    And the API received no calls at all

    Examples:
      | missing     | key | endpoint                 | field       | variable              |
      | a key       | unset | https://tide.example.com | api_key_env | AZURE_OPENAI_API_KEY  |
      | an endpoint | k     | unset                    | base_url    | AZURE_OPENAI_ENDPOINT |

  Scenario Outline: The emulated API answers as Azure does: <case>
    When a call reaches "<path>" with the key and <query>
    Then the Azure API answers 404 with the code "<code>" and an apim-request-id

    Examples:
      | case                     | path                                           | query             | code               |
      | no api-version           | /openai/deployments/tide-batch/chat/completions | no api-version    | 404                |
      | an unknown deployment    | /openai/deployments/nowhere/chat/completions    | its api-version   | DeploymentNotFound |

  Scenario: The emulated resource is kept in the state file; a batch running past 24 hours is not expired
    When an Azure batch is created on an emulator with a state file, which is then started again from it
    Then the restarted emulator shows the batch "finalizing" after 25 hours, "completed" 3 hours later

  Scenario: The official SDK's batch life cycle over a socket, with only AZURE_OPENAI_ENDPOINT pointing at the emulator
    Given an emulated Azure OpenAI API served on a socket, whose batches take no time
    When a program with only those variables set goes through the SDK's batch life cycle
    Then the program saw:
      | step                                     |
      | uploaded batch                           |
      | created validating {'k': 'v'}            |
      | retrieved completed                      |
      | listed True                              |
      | answered one gpt-4o-mini-2024-07-18      |
      | cancel refused 400                       |
      | deleted True                             |

  Scenario: A parked Azure call is collected by lowtide collect, which reaches the resource by the ledger's endpoint
    Given an emulated Azure OpenAI API served on a socket, whose batches take no time
    And an Azure OpenAI actor "tides" that builds its own client from those variables, with:
      """
      batch_processing: batch
      provider_options: {azure_openai: {model: gpt-4o-mini}}
      batch: {poll_interval: 30}
      """
    When the actor parks "When is high tide?" with the key "high", in a program that then ends
    And lowtide collects the ended Azure batches, with no client but those variables
    Then the ledger records the Azure batch at the resource's endpoint
    And lowtide status shows these tickets:
      | key  | state     | batch | attempts |
      | high | collected | yes   | 1        |
