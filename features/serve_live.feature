Feature: lowtide serve in live mode relays a streamed answer while it is written
  As a developer whose program streams answers through the Anthropic, OpenAI or Gemini SDK
  I want `lowtide serve --mode live` to pass each piece on as the provider writes it, in the API's own events
  So that my users see the answer grow, and a stream they leave stops costing anything

  Background:
    Given an emulator whose streamed answers wait after their first piece until the client has it
    And lowtide serve in live mode in front of it, for an Anthropic, an OpenAI and a Gemini actor

  Scenario Outline: <sdk> gets the first piece while the rest of the answer is still upstream
    When "Describe the harbour at low tide, in some detail." is streamed from lowtide serve with <sdk>
    Then the client had a piece of the answer while the emulator still held the rest
    And the text the SDK put together is the pieces joined, and the answer the same request gets unstreamed
    And the emulator streamed 1 answer(s)

    Examples:
      | sdk                                      |
      | the Anthropic SDK's messages.stream      |
      | the OpenAI SDK's chat.completions stream |
      | the OpenAI SDK's responses.stream        |
      | the Gemini SDK's generate_content_stream |

  Scenario Outline: A tool call is relayed as its arguments stream, and <sdk>'s finished answer holds it whole
    When "Record today's high tide" is streamed from lowtide serve with <sdk>, the tool "record_tide" forced
    Then the client had a piece of the answer while the emulator still held the rest
    And the SDK's finished answer calls "record_tide" with the arguments its pieces joined make

    Examples:
      | sdk                                      |
      | the Anthropic SDK's messages.stream      |
      | the OpenAI SDK's chat.completions stream |
      | the OpenAI SDK's responses.stream        |

  Scenario Outline: Thinking is relayed as <sdk> streams it, before the text, and its finished answer holds it
    When "Describe the harbour at low tide, in some detail." is streamed from lowtide serve with <sdk>, asked to think
    Then the client had a piece of thinking while the emulator still held the rest
    And the SDK's finished answer thinks first, its thinking the thinking pieces joined, its text the text pieces

    Examples:
      | sdk                                      |
      | the Anthropic SDK's messages.stream      |
      | the OpenAI SDK's responses.stream        |
      | the Gemini SDK's generate_content_stream |

  Scenario: A client that leaves mid-stream cancels the upstream call, and nothing is left running or unretrieved
    When the Anthropic SDK's messages.stream of "Describe the harbour at low tide, in some detail." is left after its first piece of text
    Then lowtide serve closed its stream from the emulator while the rest was held, and ran nothing more for it
    And nothing was logged saying "Task exception was never retrieved"
    And the emulator streamed 1 answer(s)

  Scenario: A call the provider refuses before any piece gets the API's status and error, not an opened stream
    Given the emulator refuses the next Messages call with status 400
    When "Describe the harbour" is streamed from lowtide serve with the Anthropic SDK's messages.stream, which fails
    Then the SDK raised status 400 "invalid_request_error" before any piece, as unstreamed

  Scenario: A stream that breaks upstream after a piece ends with the API's error event, never a short answer
    Given the emulator's next stream breaks after its first piece
    When "Describe the harbour at low tide, in some detail." is streamed from lowtide serve with the Anthropic SDK's messages.stream, which fails
    Then the SDK got 1 piece(s), then raised the API's error event saying "stream"
