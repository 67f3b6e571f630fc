Feature: Azure OpenAI's remaining paths: refusals before sending, the direct batch provider, clients, the emulated resource's answers
  As a developer whose agent runs on an Azure OpenAI deployment
  I want every refusal said before anything is sent, every client setting honoured, and the emulated resource to
  answer wrong calls as Azure does
  So that what works against the emulator works against my resource

  Background:
    Given an emulated Azure OpenAI API
    And an Azure OpenAI actor "tides" with:
      """
      max_tokens: 64
      """

  Scenario Outline: <what> is refused before anything is sent, naming the field
    When the actor is asked with:
      """
      <request>
      """
    Then a ConfigurationError is raised
    And the error names the field "<field>"
    And the error message contains "<says>"
    And the error message does not contain "Responses endpoint"
    And the API received no calls at all

    Examples:
      | what                        | request                                                                                                                                                                                   | field                                           | says                                         |
      | An image by file id         | messages: [{role: user, content: [{type: image, source: {type: file, file_id: file-1}}]}]                                                                                                 | messages[0].content[0].source                   | send the image inline (base64) or by URL     |
      | A document by URL           | messages: [{role: user, content: [{type: document, source: {type: url, url: "https://example.com/t.pdf"}}]}]                                                                              | messages[0].content[0].source                   | send the file inline                         |
      | An image in a tool result   | messages: [{role: user, content: Hi}, {role: assistant, content: [{type: tool_use, id: c1, name: f, input: {}}]}, {role: user, content: [{type: tool_result, tool_use_id: c1, content: [{type: image, source: {type: url, url: "https://example.com/i.png"}}]}]}] | messages[2].content[0].content                  | send images and files in a user message      |
      | A reasoning summary         | {prompt: Hi, provider_options: {azure_openai: {reasoning: {summary: auto}}}}                                                                                                              | provider_options.azure_openai.reasoning.summary | remove provider_options.azure_openai.reasoning.summary |
      | A server tool               | {prompt: Hi, tools: [{name: web_search, type: web_search_20250305}]}                                                                                                                      | tools[0].type                                   | only function tools are sent                 |

  Scenario: A PDF sent inline goes to the deployment, its tokens left for the API to count
    When the actor is asked with:
      """
      messages:
        - role: user
          content:
            - {type: document, title: Tide table, source: {type: base64, media_type: application/pdf, data: aGVsbG8=}}
            - {type: text, text: "When is high tide?"}
      """
    Then the answer is the emulated reply to "When is high tide?"

  Scenario: A live bulk run through the deployment answers every prompt
    When the Azure actor answers 3 prompts in a live bulk run
    Then the live run's 3 items were answered by Azure OpenAI
    And the API received these calls:
      | call                                 | count |
      | azure_openai.chat.completions.create | 3     |

  Scenario: The provider's direct batch, outside the ledger, answers a request or raises its error
    Given an Azure OpenAI actor "nightly" with:
      """
      batch_processing: batch
      """
    When the Azure OpenAI batch provider answers "When is high tide?" alone, outside the ledger
    Then the answer is the emulated reply to "When is high tide?"
    And the ledger holds no request
    When the Azure OpenAI batch provider answers "[[emulator:errored:invalid_request_error]] Which tide?" alone, outside the ledger
    Then a BatchRequestErrored is raised

  Scenario: A stored request written in another key order goes into the batch's file alike, without its model
    When an Azure batch line is encoded from the stored request {"url": "/chat/completions", "model": "gpt-4o-mini", "method": "POST", "body": {"model": "tide-batch", "messages": []}}
    Then the Azure batch line is {"custom_id": "c1", "body": {"messages": [], "model": "tide-batch"}, "method": "POST", "url": "/chat/completions"}

  Scenario: A client that is not an AsyncAzureOpenAI is refused, naming what it must be
    When an Azure OpenAI actor is built with a client that is not an AsyncAzureOpenAI
    Then a ConfigurationError is raised
    And the error names the field "client"
    And the error message contains "client must be an openai.AsyncAzureOpenAI for provider azure_openai, not str"

  Scenario: An actor building its own client uses the API version its settings name, and closes the client it made
    Given an emulated Azure OpenAI API served on a socket, whose batches take no time
    And an Azure OpenAI actor "versioned" that builds its own client from those variables, with:
      """
      provider_options: {azure_openai: {model: gpt-4o-mini, api_version: 2025-04-01-preview}}
      """
    When the actor is asked "When is high tide?"
    Then the answer is the emulated reply to "When is high tide?"
    And the actor's Azure client speaks the API version 2025-04-01-preview
    When the actor is closed
    Then the actor's Azure client is closed

  Scenario: lowtide.providers.azure_openai exports its providers by name, and nothing it does not have
    Then every name in lowtide.providers.azure_openai's __all__ is exported
    And asking lowtide.providers.azure_openai for "AzureClient" raises an AttributeError naming it

  Scenario Outline: The emulated resource answers as Azure does: <case>
    When the Azure API is sent <method> "<path>" with <auth> and the body <body>
    Then the Azure API answers <status> with the code "<code>" and an apim-request-id
    And the Azure API's error says "<says>"

    Examples:
      | case                        | method | path                                            | auth             | body                                                                                    | status | code          | says                                  |
      | an empty conversation       | POST   | /openai/deployments/tide-batch/chat/completions | the key          | {"messages": []}                                                                        | 400    | empty_array   | Invalid 'messages': empty array       |
      | a method the path does not take | GET | /openai/deployments/tide-batch/chat/completions | the key          | null                                                                                    | 405    | 405           | Method Not Allowed                    |
      | no key                      | POST   | /openai/deployments/tide-batch/chat/completions | no key           | {"messages": [{"role": "user", "content": "Hi"}]}                                       | 401    | 401           | Access denied                         |
      | a batch of another endpoint | POST   | /openai/batches                                 | the key          | {"input_file_id": "file-1", "endpoint": "/v1/embeddings", "completion_window": "24h"}   | 400    | invalid_value | Supported values are: '/chat/completions' |

  Scenario: A program signing in with a Microsoft Entra ID token is answered like one with a key
    When the Azure API is sent POST "/openai/deployments/tide-batch/chat/completions" with an Entra ID token and the body {"messages": [{"role": "user", "content": "When is high tide?"}]}
    Then the Azure API answered with the emulated reply to "When is high tide?"

  Scenario: The resource refuses an upload past its most files, in Azure's words
    Given the emulated Azure resource holds 2 files, as many as it may
    When a program uploads one more batch file through the SDK
    Then the upload was refused with 400 and the code "FileLimitExceeded"

  Scenario: The resource's stats count its batches, and a reset empties it
    Given an Azure OpenAI actor "nightly" with:
      """
      batch_processing: batch
      """
    When the actor is asked "When is high tide?"
    Then the emulated Azure resource's stats count 1 batch
    When the emulated Azure resource is reset
    Then the emulated Azure resource's stats count 0 batches

  Scenario: A resource whose requests are limited to fewer bytes refuses a bigger one with 413
    Given an emulated Azure OpenAI API taking request bodies of at most 300 bytes
    When the Azure API is sent POST "/openai/deployments/tide-batch/chat/completions" with the key and a message of 400 characters
    Then the Azure API answers 413 with the code "413" and an apim-request-id
    And the Azure API's error says "Request exceeds the maximum allowed number of bytes (300)."

  Scenario: A batch whose request names no deployment fails as a whole, saying which parameter is missing
    When a program creates an Azure batch of one request that names no deployment
    Then the Azure batch failed with the error "missing_required_parameter" on "body.model"
