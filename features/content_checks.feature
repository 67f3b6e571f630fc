Feature: Content every API would refuse is refused before anything is sent, on every provider
  As a developer sending images and tools through any provider
  I want a broken image, an image type the provider cannot read, and a tool_choice naming no tool refused at once
  So that I never pay for a request, or wait on a batch, that the API was always going to refuse

  Background:
    Given every provider's API emulated behind one address, whose batches take 1 second

  Scenario Outline: <what> is refused on <provider>, naming the field, and the API answers nothing
    Given a <mode>-mode "<provider>" actor of the model "<model>" that reaches it
    When the actor is sent <what>
    Then a ConfigurationError naming "<field>" is raised, saying "<message>"
    And the API was asked nothing but which models it serves
    And the ledger holds no request

    Examples: invalid base64
      | what                          | provider     | mode  | model                                              | field                             | message                                       |
      | an image that is not base64   | anthropic    | live  | claude-haiku-4-5                                   | messages.0.content.1.source.data  | messages.0.content.1.source.data: not valid base64 ('not base64!!') |
      | an image that is not base64   | anthropic    | batch | claude-haiku-4-5                                   | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | openai       | live  | gpt-5.4-mini                                       | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | gemini       | live  | gemini-2.5-flash                                   | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | bedrock      | live  | anthropic.claude-3-haiku-20240307-v1:0             | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | mistral      | live  | mistral-small-latest                               | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | azure_openai | live  | gpt-4.1-mini                                       | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | groq         | live  | meta-llama/llama-4-scout-17b-16e-instruct          | messages.0.content.1.source.data  | not valid base64                              |
      | an image that is not base64   | together     | live  | meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8  | messages.0.content.1.source.data  | not valid base64                              |
      | a PDF that is not base64      | anthropic    | live  | claude-haiku-4-5                                   | messages.0.content.1.source.data  | not valid base64                              |
      | an image in base64 lines      | openai       | live  | gpt-5.4-mini                                       | messages.0.content.1.source.data  | give the file's bytes base64-encoded in one line |

    Examples: an image type the provider cannot read
      | what                          | provider     | mode  | model                                              | field                                 | message                                                                                          |
      | a BMP image                   | anthropic    | live  | claude-haiku-4-5                                   | messages[0].content[1].source.media_type | Anthropic cannot take an image of type 'image/bmp'; it reads image/gif, image/jpeg, image/png, image/webp. |
      | a BMP image                   | anthropic    | batch | claude-haiku-4-5                                   | messages[0].content[1].source.media_type | Anthropic cannot take an image of type 'image/bmp'                                            |
      | a BMP image                   | openai       | live  | gpt-5.4-mini                                       | messages[0].content[1].source.media_type | OpenAI cannot take an image of type 'image/bmp'                                               |
      | a BMP image                   | gemini       | live  | gemini-2.5-flash                                   | messages[0].content[1].source.media_type | Gemini cannot take an image of type 'image/bmp'                                               |
      | a BMP image                   | mistral      | live  | mistral-small-latest                               | messages[0].content[1].source.media_type | Mistral cannot take an image of type 'image/bmp'                                              |
      | a BMP image                   | azure_openai | live  | gpt-4.1-mini                                       | messages[0].content[1].source.media_type | Azure OpenAI cannot take an image of type 'image/bmp'                                         |
      | a BMP image                   | groq         | live  | meta-llama/llama-4-scout-17b-16e-instruct          | messages[0].content[1].source.media_type | Groq cannot take an image of type 'image/bmp'                                                 |
      | a BMP image                   | together     | live  | meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8  | messages[0].content[1].source.media_type | Together AI cannot take an image of type 'image/bmp'                                          |
      | a BMP image in a tool result  | anthropic    | live  | claude-haiku-4-5                                   | messages[2].content[0].content[0].source.media_type | Anthropic cannot take an image of type 'image/bmp'                              |
      | a BMP image                   | bedrock      | live  | anthropic.claude-3-haiku-20240307-v1:0             | messages[0].content[1]                | Bedrock takes png, jpeg, gif or webp images, not image/bmp.                                      |

    Examples: a tool_choice naming no tool
      | what                          | provider     | mode  | model                                              | field            | message                                                                                  |
      | a tool_choice naming no tool  | anthropic    | live  | claude-haiku-4-5                                   | tool_choice.name | tool_choice.name: 'forecast' is not among the request's tools ('weather'); the API would refuse the request. |
      | a tool_choice naming no tool  | anthropic    | batch | claude-haiku-4-5                                   | tool_choice.name | 'forecast' is not among the request's tools ('weather')                                  |
      | a tool_choice naming no tool  | openai       | live  | gpt-5.4-mini                                       | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | gemini       | live  | gemini-2.5-flash                                   | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | bedrock      | live  | anthropic.claude-3-haiku-20240307-v1:0             | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | mistral      | live  | mistral-small-latest                               | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | azure_openai | live  | gpt-4.1-mini                                       | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | groq         | live  | meta-llama/llama-4-scout-17b-16e-instruct          | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice naming no tool  | together     | live  | meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8  | tool_choice.name | 'forecast' is not among the request's tools                                              |
      | a tool_choice with no tools   | anthropic    | live  | claude-haiku-4-5                                   | tool_choice.name | 'forecast' is not among the request's tools (none)                                       |

  Scenario Outline: A good image, and a tool_choice naming a tool, are sent as before (<provider>)
    Given a live-mode "<provider>" actor of the model "<model>" that reaches it
    When the actor is sent <what>
    Then the actor was answered

    Examples:
      | what                                   | provider  | model            |
      | a PNG image                            | anthropic | claude-haiku-4-5 |
      | a PNG image                            | openai    | gpt-5.4-mini     |
      | a tool_choice naming its tool          | anthropic | claude-haiku-4-5 |
      | a tool_choice naming its tool          | mistral   | mistral-small-latest |
